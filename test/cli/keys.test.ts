import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreatedKey, KeyInfo } from "../../src/ports/key-store.js";
import { FakeUnkey } from "../fakes/unkey.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/env.js";
import { bearer, classify } from "../helpers/key-stores.js";

/** Runs `almanac keys …` (in-process): exit code, parsed stdout (JSON) and stderr. */
async function almanac(env: Record<string, string>, ...args: string[]) {
  const { code, stdout, stderr } = await runCli(["keys", ...args], { LOG_LEVEL: "silent", ...env });
  return { code, json: code === 0 ? (JSON.parse(stdout) as unknown) : null, stderr };
}

describe("almanac keys (embedded store, same SQLite file as a running app)", () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir };
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(env);
  });
  afterAll(() => t.close());

  it("create prints the plaintext key once; the running app accepts it; list never shows it", async () => {
    const created = await almanac(env, "create", "--name", "ci", "--remaining", "5", "--ratelimit", "100/60");
    expect(created.code).toBe(0);
    const key = created.json as CreatedKey;
    expect(key.key).toMatch(/^alm_[1-9A-HJ-NP-Za-km-z]{22,}$/);
    expect(key).toMatchObject({ name: "ci", remaining: 5, ratelimit: { limit: 100, durationSec: 60 } });
    expect(key.permissions).toEqual(["vibe.classify"]);

    expect((await classify(t, ["good"], bearer(key.key))).status).toBe(200);

    const listed = await almanac(env, "list");
    expect(listed.code).toBe(0);
    const row = (listed.json as KeyInfo[]).find((k) => k.id === key.id);
    expect(row).toMatchObject({
      prefix: key.key.slice(0, 8),
      last4: key.key.slice(-4),
      remaining: 4,
      status: "active",
    });
    expect(JSON.stringify(listed.json)).not.toContain(key.key);
  });

  it("revoke: the next call is refused; roll: the old key is refused and the new one works", async () => {
    const a = (await almanac(env, "create", "--name", "a")).json as CreatedKey;
    const b = (await almanac(env, "create", "--name", "b", "--permission", "vibe.classify")).json as CreatedKey;

    expect((await almanac(env, "revoke", a.id)).json).toEqual({ id: a.id, revoked: true });
    expect((await classify(t, ["good"], bearer(a.key))).status).toBe(401);

    const rolled = await almanac(env, "roll", b.id);
    const fresh = rolled.json as CreatedKey & { replaces: string };
    expect(fresh.replaces).toBe(b.id);
    expect(fresh.key).not.toBe(b.key);
    expect(fresh).toMatchObject({ name: "b", permissions: ["vibe.classify"] });
    expect((await classify(t, ["good"], bearer(b.key))).status).toBe(401);
    expect((await classify(t, ["good"], bearer(fresh.key))).status).toBe(200);
    // Rolling the same (now revoked) key again issues nothing.
    const again = await almanac(env, "roll", b.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no active key ${b.id}`);
  });

  it("roll --grace: the old key keeps working until the grace period ends, and expires then", async () => {
    const c = (await almanac(env, "create", "--name", "graceful")).json as CreatedKey;
    const rolled = (await almanac(env, "roll", c.id, "--grace", "3600")).json as CreatedKey;
    expect((await classify(t, ["good"], bearer(c.key))).status).toBe(200);
    expect((await classify(t, ["good"], bearer(rolled.key))).status).toBe(200);
    const old = (await t.deps.keys.list(undefined)).find((k) => k.id === c.id);
    const left = Date.parse(old?.expiresAt ?? "") - Date.now();
    expect(left).toBeGreaterThan(3500_000);
    expect(left).toBeLessThanOrEqual(3600_000);
  });

  it("an account's key edited, rolled and revoked with the CLI: each event is in the account's audit log", async () => {
    const ownerId = `user_cli_${Date.now()}`;
    const made = await t.deps.keys.accounts.create({
      ownerId,
      email: `${ownerId}@example.test`,
      name: "page",
      permissions: ["vibe.classify"],
      expiresAt: null,
    });
    if (!made.ok) throw new Error(`key not created: ${made.error.kind}`);
    expect((await almanac(env, "update", made.value.id, "--name", "renamed")).code).toBe(0);
    const rolled = (await almanac(env, "roll", made.value.id)).json as CreatedKey;
    expect((await almanac(env, "revoke", rolled.id)).code).toBe(0);
    const events = (await t.deps.activity?.listAudit(ownerId))?.map((e) => [e.event, e.keyId]);
    expect(events).toEqual([
      ["revoked", rolled.id],
      ["rolled", made.value.id],
      ["edited", made.value.id],
      ["created", made.value.id],
    ]);
  });

  it("bad input exits 1 with a message naming the problem", async () => {
    const r1 = await almanac(env, "create", "--name", "x", "--ratelimit", "5");
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain("N/SECONDS");
    const r2 = await almanac(env, "create", "--name", "x", "--expires", "next week");
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("ISO 8601");
    const r3 = await almanac(env, "revoke", "key_doesnotexist");
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain("no key key_doesnotexist");
    const r4 = await almanac(env, "create", "--name", "x", "--owner", "nobody@example.com");
    expect(r4.code).toBe(1);
    expect(r4.stderr).toContain("no account with e-mail nobody@example.com");
  });
});

describe("almanac keys (Unkey, through its API)", () => {
  let unkey: FakeUnkey;
  let env: Record<string, string>;
  beforeAll(async () => {
    unkey = await new FakeUnkey().start();
    env = {
      DATA_DIR: tempDir(),
      UNKEY_ROOT_KEY: unkey.rootKey,
      UNKEY_API_ID: unkey.apiId,
      UNKEY_BASE_URL: unkey.url,
    };
  });
  afterAll(() => unkey.close());

  it("create, list, revoke and roll go to Unkey's key endpoints with the root key", async () => {
    const created = (await almanac(env, "create", "--name", "u", "--owner", "user_42", "--remaining", "3"))
      .json as CreatedKey;
    expect(created.key).toMatch(/^alm_/);
    const createCall = unkey.callsTo("/v2/keys.createKey")[0];
    expect(createCall?.authorization).toBe(`Bearer ${unkey.rootKey}`);
    expect(createCall?.body).toMatchObject({
      apiId: unkey.apiId,
      prefix: "alm",
      name: "u",
      externalId: "user_42",
      permissions: ["vibe.classify"],
      credits: { remaining: 3 },
    });

    const listed = (await almanac(env, "list")).json as KeyInfo[];
    expect(listed).toEqual([
      expect.objectContaining({ id: created.id, ownerId: "user_42", remaining: 3, last4: created.key.slice(-4) }),
    ]);

    const rolled = (await almanac(env, "roll", created.id)).json as CreatedKey;
    expect(unkey.callsTo("/v2/keys.rerollKey")[0]?.body).toEqual({ keyId: created.id, expiration: 0 });
    expect(rolled.id).not.toBe(created.id);

    expect((await almanac(env, "revoke", rolled.id)).json).toEqual({ id: rolled.id, revoked: true });
    expect(unkey.callsTo("/v2/keys.updateKey").at(-1)?.body).toEqual({ keyId: rolled.id, enabled: false });
    const statuses = ((await almanac(env, "list")).json as KeyInfo[]).map((k) => [k.id, k.status]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [created.id, "expired"],
        [rolled.id, "revoked"],
      ]),
    );
  });

  it("Unkey refusing the call exits 1 with Unkey's reason", async () => {
    const r = await almanac({ ...env, UNKEY_ROOT_KEY: "wrong_root" }, "list");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 401: Unauthorized: The root key is invalid.");
  });
});
