import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PLANS } from "../../src/features/keys/plans.js";
import { FakeClassifierProvider } from "../fakes/classifier-provider.js";
import { type TestServer, testServer } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl } from "../helpers/env.js";
import { bearer, PERMISSION, until } from "../helpers/key-stores.js";
import { expectValue } from "../helpers/result.js";

/**
 * The operator cuts a key's uses (`almanac keys update --remaining 2`), or the account moves to a
 * lower plan, while the client has calls in flight, charged before the change. The client then
 * cuts them (or they fail): their refunds went on top of the new count, so cutting 10 calls
 * after `--remaining 2` left 12 — the client chose how far above the new limit it got. A call
 * charged before the change gets nothing back now (it is still taken out of the counts).
 */
const IN_FLIGHT = 10;

const setups: [string, boolean][] = [["SQLite", false]];
if (DATABASE_URL) setups.push(["PostgreSQL", true]);

describe.each(setups)("a limit change while charged calls are in flight (%s)", (_name, postgres) => {
  let provider: FakeClassifierProvider;
  let s: TestServer;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    provider = await new FakeClassifierProvider().start();
    const pg = postgres ? await freshPostgresUrl() : undefined;
    drop = pg?.drop;
    s = await testServer({
      CLASSIFIER_URL: `${provider.url}/models/sentiment`,
      UPSTREAM_TIMEOUT_MS: "30000",
      ...(pg && { DATABASE_URL: pg.url }),
    });
  });
  afterAll(async () => {
    provider.release();
    await s.close();
    await drop?.();
    await provider.close();
  });
  afterEach(() => provider.release());

  /** IN_FLIGHT calls charged and held by the classifier; `change` runs; then the client cuts them all. */
  async function cutAfter(key: string, id: string, change: () => Promise<unknown>) {
    // Known to the rejected-keys throttle first (a free call), so the burst is not held behind the
    // first verification of a token it has not seen.
    expect((await fetch(`${s.url}/v1/usage`, { headers: bearer(key) })).status).toBe(200);
    provider.calls.length = 0;
    provider.gate();
    const abort = new AbortController();
    const calls = Array.from({ length: IN_FLIGHT }, (_, i) =>
      fetch(`${s.url}/v1/vibe/classify`, {
        method: "POST",
        headers: { ...bearer(key), "Content-Type": "application/json" },
        body: JSON.stringify([`so good ${i}`]),
        signal: abort.signal,
      }).catch((err: Error) => err.name),
    );
    expect(
      await until(
        () => provider.calls.length,
        (n) => n >= IN_FLIGHT,
      ),
    ).toBe(IN_FLIGHT);
    await change();
    abort.abort();
    expect(await Promise.all(calls)).toEqual(Array(IN_FLIGHT).fill("AbortError"));
    // Cut calls are taken out of the counts (their refund ran): none was served.
    expect(
      await until(
        async () => (await s.deps.keys.usage.counts([id])).get(id)?.last24h,
        (n) => n === 0,
      ),
    ).toBe(0);
  }

  it("keys update --remaining 2: the calls cut after it leave 2", async () => {
    const { key, id } = await s.deps.keys.create({ name: "cut", permissions: [PERMISSION], remaining: 1000 });
    await cutAfter(key, id, () => s.deps.keys.update(id, { remaining: 2 }));
    expect((await s.deps.keys.list()).find((k) => k.id === id)?.remaining).toBe(2);
  });

  it("a move to a lower plan: the account keeps the lower plan's uses", async () => {
    const ak = s.deps.keys.accounts;
    const email = `cut-${Date.now()}@example.test`;
    await ak.plans.grant(email, "pro", "cli");
    const ownerId = `user_cut_${Date.now()}`;
    const key = expectValue(await ak.create({ ownerId, email, permissions: [PERMISSION], expiresAt: null, name: "a" }));
    await ak.quotas.open(ownerId, PLANS.pro);
    await cutAfter(key.key, key.id, () => ak.quotas.applyPlan(ownerId, PLANS.free, true));
    expect(await ak.quotas.remaining(ownerId)).toBe(PLANS.free.quota);
  });

  it("a refund of a call charged after the change is given back as before", async () => {
    const { key, id } = await s.deps.keys.create({ name: "after", permissions: [PERMISSION], remaining: 1000 });
    await s.deps.keys.update(id, { remaining: 50 });
    await cutAfter(key, id, async () => {});
    expect((await s.deps.keys.list()).find((k) => k.id === id)?.remaining).toBe(50);
  });
});
