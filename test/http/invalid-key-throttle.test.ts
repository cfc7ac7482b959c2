import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/deps.js";
import type { KeyStore } from "../../src/ports/key-store.js";
import { errorOf, expectRateLimited, type TestApp, testApp } from "../helpers/app.js";
import { REDIS_URL, skipReason } from "../helpers/env.js";

describe("repeated invalid keys from one IP are throttled (INVALID_KEY_LIMIT per 10 minutes)", () => {
  let t: TestApp;
  let good: string;
  beforeAll(async () => {
    t = await testApp({ INVALID_KEY_LIMIT: "3", DEMO_HOURLY_LIMIT: "1000" });
    good = (await t.deps.keys.create({ name: "good", permissions: ["vibe.classify"] })).key;
  });
  afterAll(() => t.close());

  const from = (ip: string, path: string, authorization?: string, init: RequestInit = {}) =>
    t.app.request(
      path,
      { ...init, headers: { ...(authorization && { Authorization: authorization }), ...init.headers } },
      { incoming: { socket: { remoteAddress: ip } } },
    );
  const classify = (ip: string, authorization: string) =>
    from(ip, "/v1/vibe/classify", authorization, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(["hi"]),
    });

  it("3 rejected keys (GET or classify) → then 429 INVALID_KEY_LIMIT for keys not recognised lately, from that IP only", async () => {
    const ip = "198.51.100.20";
    for (const res of [
      await from(ip, "/v1/moon", "Bearer alm_guess1"),
      await classify(ip, "Bearer alm_guess2"),
      await from(ip, "/v1/vat?code=DE", "Bearer alm_guess3"),
    ]) {
      expect(res.status).toBe(401);
      expect((await errorOf(res)).error.reason).toBe("INVALID");
    }
    const retry = await expectRateLimited(
      await from(ip, "/v1/moon", "Bearer alm_guess4"),
      "INVALID_KEY_LIMIT",
      "Too many requests with rejected API keys from this address (3 in 10 minutes); retry later.",
    );
    expect(retry).toBeLessThanOrEqual(600);
    // A valid key the store has not seen lately is not looked up either (a guess looks the same)...
    expect((await classify(ip, `Bearer ${good}`)).status).toBe(429);
    // ...calls without a key still go through (the demo tier decides them)...
    expect((await from(ip, "/v1/moon")).status).toBe(200);
    // ...and another IP with the valid key is served.
    expect((await classify("198.51.100.21", `Bearer ${good}`)).status).toBe(200);
  });

  it("a key in use is not locked out by wrong keys sent from the same address (a shared NAT)", async () => {
    const ip = "198.51.100.25";
    expect((await classify(ip, `Bearer ${good}`)).status).toBe(200);
    for (const guess of ["alm_n1", "alm_n2", "alm_n3"])
      expect((await from(ip, "/v1/moon", `Bearer ${guess}`)).status).toBe(401);
    await expectRateLimited(
      await from(ip, "/v1/moon", "Bearer alm_n4"),
      "INVALID_KEY_LIMIT",
      "Too many requests with rejected API keys from this address (3 in 10 minutes); retry later.",
    );
    // The customer's key, recognised within the last minute, is still verified and served.
    for (let i = 0; i < 3; i++) expect((await classify(ip, `Bearer ${good}`)).status).toBe(200);
  });

  it("a missing or malformed header is not a guess: it does not count", async () => {
    const ip = "198.51.100.30";
    for (let i = 0; i < 5; i++) expect((await classify(ip, "Basic abc")).status).toBe(401);
    expect((await classify(ip, `Bearer ${good}`)).status).toBe(200);
  });
});

/** The key store under the throttle, counting the verifications that reach it. */
function countingStore(deps: AppDeps) {
  const inner = deps.keys;
  const counter = { calls: 0 };
  const keys: AppDeps["keys"] = new Proxy(inner, {
    get: (target, prop) =>
      prop === "verify"
        ? (...args: Parameters<KeyStore["verify"]>) => {
            counter.calls++;
            return target.verify(...args);
          }
        : Reflect.get(target, prop),
  });
  return { keys, counter };
}

const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function keyed(t: TestApp, ip: string, token: string) {
  return t.app.request(
    "/v1/vibe/classify",
    {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(["hi"]),
    },
    { incoming: { socket: { remoteAddress: ip } } },
  );
}

const statuses = (all: Response[]) =>
  all.reduce<Record<number, number>>((acc, r) => {
    acc[r.status] = (acc[r.status] ?? 0) + 1;
    return acc;
  }, {});

async function counted(env: Record<string, string>) {
  let counter = { calls: 0 };
  const t = await testApp({ INVALID_KEY_LIMIT: "20", ...env }, (deps) => {
    const c = countingStore(deps);
    counter = c.counter;
    return { keys: c.keys };
  });
  return { t, store: counter };
}

describe("a burst of wrong keys reaches the key store at most INVALID_KEY_LIMIT times (spend first, then verify)", () => {
  it("one instance: 100 concurrent wrong keys from one IP → 20 verifications, 20 × 401, 80 × 429", async () => {
    const { t, store } = await counted({});
    try {
      const ip = randomIp();
      const all = await Promise.all(Array.from({ length: 100 }, (_, i) => keyed(t, ip, `alm_wrong${i}`)));
      expect(store.calls).toBe(20);
      expect(statuses(all)).toEqual({ 401: 20, 429: 80 });
      // The same wrong token 100 times is no different.
      const again = await Promise.all(Array.from({ length: 100 }, () => keyed(t, ip, "alm_same")));
      expect(statuses(again)).toEqual({ 429: 100 });
      expect(store.calls).toBe(20);
    } finally {
      await t.close();
    }
  });

  it("one instance: 100 concurrent calls with one valid key from one IP are all served (they never wait on reservations)", async () => {
    const { t, store } = await counted({});
    try {
      const { key } = await t.deps.keys.create({ name: "busy", permissions: ["vibe.classify"] });
      const ip = randomIp();
      const all = await Promise.all(Array.from({ length: 100 }, () => keyed(t, ip, key)));
      expect(statuses(all)).toEqual({ 200: 100 });
      expect(store.calls).toBe(100);
      // ...and the IP's guess budget is untouched: 20 wrong keys are still answered 401.
      const wrong = await Promise.all(Array.from({ length: 25 }, (_, i) => keyed(t, ip, `alm_nope${i}`)));
      expect(statuses(wrong)).toEqual({ 401: 20, 429: 5 });
    } finally {
      await t.close();
    }
  });

  it.skipIf(!REDIS_URL)(
    `two instances on one Redis: 100 concurrent wrong keys from one IP, split over both → 20 verifications in all ${skipReason({ redis: true }) ?? ""}`,
    async () => {
      const a = await counted({ REDIS_URL: REDIS_URL as string });
      const b = await counted({ REDIS_URL: REDIS_URL as string });
      try {
        const ip = randomIp();
        const all = await Promise.all(
          Array.from({ length: 100 }, (_, i) => keyed(i % 2 ? a.t : b.t, ip, `alm_wrong${i}`)),
        );
        expect(a.store.calls + b.store.calls).toBe(20);
        expect(statuses(all)).toEqual({ 401: 20, 429: 80 });
      } finally {
        await a.t.close();
        await b.t.close();
      }
    },
  );
});
