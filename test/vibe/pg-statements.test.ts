import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bearer, classify, remainingOf } from "../helpers/key-stores.js";
import { expectValue } from "../helpers/result.js";

/** The statements one classify call sends to PostgreSQL: each as its text and, when named (prepared), its name. */
async function statementsOf(t: TestApp, headers: Record<string, string>, status = 200) {
  // The counts and logs of earlier calls are written first, so that their batch (due a second
  // after those calls) is not among this call's statements.
  await t.deps.keys.usage.flush();
  await t.deps.activity?.flush();
  const query = vi.spyOn(pg.Client.prototype, "query");
  try {
    const res = await classify(t, ["good"], headers);
    expect(res.status).toBe(status);
    return query.mock.calls.map(([q]) =>
      typeof q === "string" ? { text: q, name: undefined } : (q as { text: string; name?: string }),
    );
  } finally {
    query.mockRestore();
  }
}

describe.skipIf(!DATABASE_URL)(`classify's statements on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
  let t: TestApp;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const schema = await freshPostgresUrl();
    drop = schema.drop;
    t = await testApp({ DATABASE_URL: schema.url });
  });
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });

  it("the key lookup is one unnamed statement (no prepared statement a pooler in transaction mode would lose)", async () => {
    const key = await t.deps.keys.create({ name: "plain", permissions: ["vibe.classify"] });
    await statementsOf(t, bearer(key.key)); // its first call may also refresh last_used_at
    const sent = await statementsOf(t, bearer(key.key));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.text).toMatch(/"k"."key_hash" = \$1/);
    expect(sent[0]?.name).toBeUndefined();
  });

  it("an idempotent call adds two statements, its claim and its stored answer: the lookup records its charge on the claim", async () => {
    const key = await t.deps.keys.create({ name: "idem", permissions: ["vibe.classify"] });
    await statementsOf(t, bearer(key.key));
    const sent = await statementsOf(t, { ...bearer(key.key), "Idempotency-Key": `pg-${Date.now()}` });
    expect(sent.map((s) => s.text.split(" ")[0])).toEqual(["insert", "with", "update"]);
    expect(sent[1]?.text).toMatch(/update idempotency i set charged = 1/);
    expect(sent.every((s) => s.name === undefined)).toBe(true);
  });

  /** An account-page key of a new account on `plan`, with `uses` left for the account. */
  async function accountKey(plan: "free" | "pro", uses: number) {
    const ak = t.deps.keys.accounts;
    const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const email = `pg-${stamp}@example.test`;
    await ak.plans.grant(email, plan, "cli");
    const owner = { ownerId: `user_${stamp}`, email, permissions: ["vibe.classify"], expiresAt: null };
    const key = expectValue(await ak.create({ ...owner, name: "a" }));
    const pool = await ak.poolOfAccount(owner.ownerId, email);
    await t.deps.database.db
      .updateTable("account_quotas")
      .set({ remaining: uses })
      .where("owner_id", "=", pool)
      .execute();
    return { key, uses: () => ak.quotas.remaining(pool) };
  }

  it("a charged call is one statement: the lookup spends the key's uses and its account's in the same round trip", async () => {
    const own = await t.deps.keys.create({ name: "own", permissions: ["vibe.classify"], remaining: 10 });
    const account = await accountKey("pro", 10);
    for (const key of [own.key, account.key.key]) {
      await statementsOf(t, bearer(key));
      expect(await statementsOf(t, bearer(key))).toHaveLength(1);
    }
    expect(await remainingOf(t.deps.keys, own.id)).toBe(8);
    expect(await account.uses()).toBe(8);
    // A roll's replacement spends the uses the pair shares, and is marked used, in that statement.
    const next = await t.deps.keys.roll(own.id);
    await statementsOf(t, bearer(next?.key ?? ""));
    await t.deps.database.db
      .updateTable("api_keys")
      .set({ last_used_at: null })
      .where("id", "=", next?.id ?? "")
      .execute();
    expect(await statementsOf(t, bearer(next?.key ?? ""))).toHaveLength(1);
    expect(await remainingOf(t.deps.keys, next?.id ?? "")).toBe(6);
    expect((await t.deps.keys.list()).find((k) => k.id === next?.id)?.lastUsedAt).not.toBeNull();
  });

  it("what the statement refuses, it does not spend: revoked, expired, forbidden, out of uses", async () => {
    // Each key is used once first: the store then looks it up with the statement that spends.
    const make = async () => {
      const k = await t.deps.keys.create({ name: "r", permissions: ["vibe.classify"], remaining: 6 });
      await statementsOf(t, bearer(k.key));
      return k;
    };
    const [revoked, expired, forbidden, spent, wildcard] = [
      await make(),
      await make(),
      await make(),
      await make(),
      await make(),
    ];
    await t.deps.keys.revoke(revoked.id);
    await t.deps.keys.update(expired.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    await t.deps.keys.update(forbidden.id, { permissions: ["contact.send", "vibe.other", "vibe.classify.x"] });
    await t.deps.keys.update(spent.id, { remaining: 0 });
    await t.deps.keys.update(wildcard.id, { permissions: ["vibe.*"] });
    expect(await statementsOf(t, bearer(revoked.key), 401)).toHaveLength(1);
    expect(await statementsOf(t, bearer(expired.key), 401)).toHaveLength(1);
    expect(await statementsOf(t, bearer(forbidden.key), 403)).toHaveLength(1);
    expect(await statementsOf(t, bearer(spent.key), 429)).toHaveLength(1);
    for (const k of [revoked, expired, forbidden]) expect(await remainingOf(t.deps.keys, k.id)).toBe(5);
    expect(await remainingOf(t.deps.keys, spent.id)).toBe(0);
    // A wildcard grants, as the key store's own check says.
    expect(await statementsOf(t, bearer(wildcard.key))).toHaveLength(1);
    expect(await remainingOf(t.deps.keys, wildcard.id)).toBe(4);
  });

  it("a call the account's rate limit refuses gives back the uses the statement spent", async () => {
    const { key, uses } = await accountKey("free", 50); // free: 10 calls a minute
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await classify(t, ["good"], bearer(key.key))).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429]);
    expect(await uses()).toBe(40);
  });

  it("an account out of uses: 429 USAGE_EXCEEDED, and a key's own uses stay with the key", async () => {
    const { key, uses } = await accountKey("pro", 1);
    await t.deps.keys.update(key.id, { remaining: 3 });
    expect((await classify(t, ["good"], bearer(key.key))).status).toBe(200);
    const refused = await classify(t, ["good"], bearer(key.key));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { reason: string } }).error.reason).toBe("USAGE_EXCEEDED");
    expect(await uses()).toBe(0);
    expect(await remainingOf(t.deps.keys, key.id)).toBe(2);
  });
});
