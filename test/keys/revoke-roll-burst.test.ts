import { afterEach, describe, expect, it } from "vitest";
import { type TestApp, testApp, withTwoInstances } from "../helpers/app.js";
import { DATABASE_URL } from "../helpers/env.js";
import { bearer, classify, PERMISSION, remainingOf } from "../helpers/key-stores.js";

const CALLS = 40;
// Revoked keys' 401s count toward the per-address throttle of rejected keys (kept in Redis between runs).
const SHARED = { REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", INVALID_KEY_LIMIT: "1000000" };

async function requests(t: TestApp, keyId: string): Promise<number> {
  return (await t.deps.keys.usage.counts([keyId])).get(keyId)?.last24h ?? 0;
}

async function burstWithRevoke(apps: TestApp[]) {
  const [a] = apps as [TestApp];
  const { key, id } = await a.deps.keys.create({ name: "burst", permissions: [PERMISSION], remaining: 1000 });
  let revokedAt = Number.POSITIVE_INFINITY;
  const results: { status: number; startedAt: number }[] = [];
  // The revoke goes out once the first call is served, while the later ones are still starting
  // (one every 2 ms): mid-burst however slow the host, not before the first answer.
  let served: () => void = () => {};
  const firstServed = new Promise<void>((resolve) => {
    served = resolve;
  });
  const calls = Array.from({ length: CALLS }, async (_, i) => {
    await new Promise((r) => setTimeout(r, i * 2));
    const startedAt = performance.now();
    const res = await classify(apps[i % apps.length] as TestApp, [`so good ${i}`], bearer(key));
    results.push({ status: res.status, startedAt });
    if (res.status === 200) served();
  });
  const revoke = (async () => {
    await firstServed;
    await a.deps.keys.revoke(id);
    revokedAt = performance.now();
  })();
  await Promise.all([...calls, revoke]);
  const ok = results.filter((r) => r.status === 200);
  expect(ok.length).toBeGreaterThan(0);
  expect(results.filter((r) => r.status !== 200).every((r) => r.status === 401)).toBe(true);
  expect(ok.filter((r) => r.startedAt > revokedAt)).toEqual([]);
  const spent = 1000 - ((await remainingOf(a.deps.keys, id)) ?? 0);
  let counted = 0;
  for (const t of apps) await t.deps.keys.usage.flush();
  counted = await requests(a, id);
  expect({ spent, counted }).toEqual({ spent: ok.length, counted: ok.length });
}

async function rollBurst(
  apps: TestApp[],
  limits: { remaining?: number; ratelimit?: { limit: number; durationSec: number } },
) {
  const [a] = apps as [TestApp];
  const old = await a.deps.keys.create({ name: "roll", permissions: [PERMISSION], ...limits });
  const fresh = await a.deps.keys.roll(old.id, undefined, { graceSec: 3600 });
  if (!fresh) throw new Error("roll");
  const statuses = await Promise.all(
    Array.from({ length: CALLS }, (_, i) =>
      Promise.resolve(
        classify(apps[i % apps.length] as TestApp, [`so good ${i}`], bearer(i % 2 ? old.key : fresh.key)),
      ).then((r) => r.status),
    ),
  );
  const cap = limits.remaining ?? limits.ratelimit?.limit ?? 0;
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  expect(statuses.filter((s) => s === 200)).toHaveLength(cap);
  expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
}

describe("revoke and roll while calls are in flight", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("SQLite: revoke mid-burst — every 200 charged and counted once, none started after the revoke", async () => {
    t = await testApp();
    await burstWithRevoke([t]);
  });
  it("SQLite: old and new key of a roll in grace share 10 uses under a burst alternating them", async () => {
    t = await testApp();
    await rollBurst([t], { remaining: 10 });
  });
  it("SQLite: and share one rate limit of 7 a minute", async () => {
    t = await testApp();
    await rollBurst([t], { ratelimit: { limit: 7, durationSec: 60 } });
  });
  it.skipIf(!DATABASE_URL)("two PostgreSQL + Redis instances: revoke mid-burst", async () => {
    await withTwoInstances(SHARED, (apps) => burstWithRevoke(apps));
  });
  it.skipIf(!DATABASE_URL)("two PostgreSQL + Redis instances: a roll in grace shares uses and rate limit", async () => {
    await withTwoInstances(SHARED, async (apps) => {
      await rollBurst(apps, { remaining: 10 });
      await rollBurst(apps, { ratelimit: { limit: 7, durationSec: 60 } });
    });
  });
});
