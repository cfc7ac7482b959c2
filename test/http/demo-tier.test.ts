import { randomInt } from "node:crypto";
import http from "node:http";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { demoTier } from "../../src/http/demo-tier.js";
import { Envelope, envelope } from "../../src/http/envelope.js";
import { MISSING_KEY_MESSAGE, REJECTED_KEY_MESSAGE } from "../../src/http/key-auth.js";
import type { AppEnv } from "../../src/http/types.js";
import type { KeyStore, KeyVerification } from "../../src/ports/key-store.js";
import { errorOf, expectRateLimited, keysOver, redisReady, type TestApp, testApp, testServer } from "../helpers/app.js";
import { REDIS_URL, skipReason } from "../helpers/env.js";

const PATH = "/v1/holidays?country=GB&year=2024";
const DEMO_MESSAGE = "Demo tier limit of 60 calls per hour reached; retry later or send an API key.";

/** A real HTTP GET whose socket is bound to `localAddress` (a second client IP on loopback). */
function getFrom(url: string, localAddress: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { localAddress, headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Verdicts by token: `alm_good` valid, `alm_down` verifier unavailable, anything else unknown. */
function fakeKeys(): KeyStore & { calls: string[] } {
  const calls: string[] = [];
  const verify = async (key: string): Promise<KeyVerification> => {
    calls.push(key);
    if (key === "alm_good") return { kind: "verdict", code: "VALID", keyId: "key_1", remaining: null };
    if (key === "alm_limited" || key === "alm_spent") {
      const ratelimit = { name: "key", limit: 5, durationSec: 60, resetMs: 30_000 };
      if (key === "alm_spent")
        return { kind: "verdict", code: "RATE_LIMITED", ratelimit: { ...ratelimit, remaining: 0 } };
      return {
        kind: "verdict",
        code: "VALID",
        keyId: "key_2",
        remaining: null,
        ratelimit: { ...ratelimit, remaining: 3 },
      };
    }
    if (key === "alm_down") return { kind: "unavailable", detail: "timeout" };
    return { kind: "verdict", code: "NOT_FOUND" };
  };
  const unused = () => Promise.reject(new Error("not used in these tests"));
  return {
    calls,
    verify,
    create: unused,
    list: unused,
    revoke: unused,
    roll: unused,
    update: unused,
    refund: unused,
  };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});
async function open<T extends { close(): Promise<void> }>(p: Promise<T>): Promise<T> {
  const t = await p;
  opened.push(t);
  return t;
}

describe("demo tier (in-process limiter)", () => {
  it("serves 60 GETs per hour per IP, then 429 DEMO_HOURLY_LIMIT with Retry-After and RateLimit headers", async () => {
    const { app } = await open(testApp());
    for (let i = 1; i <= 60; i++) {
      const res = await app.request(PATH);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-policy")).toBe('"demo";q=60;w=3600');
      expect(res.headers.get("ratelimit")).toMatch(new RegExp(`^"demo";r=${60 - i};t=\\d+$`));
    }
    const res = await app.request(PATH);
    const retryAfter = await expectRateLimited(res, "DEMO_HOURLY_LIMIT", DEMO_MESSAGE);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(res.headers.get("ratelimit-policy")).toBe('"demo";q=60;w=3600');
    expect(res.headers.get("ratelimit")).toBe(`"demo";r=0;t=${retryAfter}`);
    // Every /v1 GET shares the budget, whatever the route or outcome.
    expect((await app.request("/v1/moon")).status).toBe(429);
  });

  it("puts the headers on error answers too, and never counts /v1/openapi.json", async () => {
    const { app } = await open(testApp({ DEMO_HOURLY_LIMIT: "5" }));
    const bad = await app.request("/v1/holidays?country=GBR");
    expect(bad.status).toBe(400);
    expect(bad.headers.get("ratelimit")).toMatch(/^"demo";r=4;t=\d+$/);
    const missing = await app.request("/v1/no-such-thing");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("ratelimit")).toMatch(/^"demo";r=3;t=\d+$/);
    const doc = await app.request("/v1/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.headers.get("ratelimit")).toBeNull();
    expect((await app.request(PATH)).headers.get("ratelimit")).toMatch(/^"demo";r=2;/);
    const head = await app.request(PATH, { method: "HEAD" });
    expect(head.headers.get("ratelimit")).toMatch(/^"demo";r=1;/);
  });
});

describe("demo tier on a real socket", () => {
  it("counts per client IP: a second address (127.0.0.2) is unaffected", async () => {
    const s = await open(testServer({ DEMO_HOURLY_LIMIT: "3" }));
    for (let i = 0; i < 3; i++) expect((await getFrom(s.url + PATH, "127.0.0.1")).status).toBe(200);
    const limited = await getFrom(s.url + PATH, "127.0.0.1");
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body).error.reason).toBe("DEMO_HOURLY_LIMIT");
    expect(limited.headers["retry-after"]).toMatch(/^\d+$/);

    const other = await getFrom(s.url + PATH, "127.0.0.2");
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/^"demo";r=2;t=\d+$/);
  });

  it("ignores X-Forwarded-For unless TRUST_PROXY is set", async () => {
    const s = await open(testServer({ DEMO_HOURLY_LIMIT: "2" }));
    for (const xff of ["10.0.0.1", "10.0.0.2"]) {
      expect((await getFrom(s.url + PATH, "127.0.0.1", { "x-forwarded-for": xff })).status).toBe(200);
    }
    expect((await getFrom(s.url + PATH, "127.0.0.1", { "x-forwarded-for": "10.0.0.3" })).status).toBe(429);
  });

  it("with TRUST_PROXY=1 counts the forwarded client address", async () => {
    const s = await open(testServer({ DEMO_HOURLY_LIMIT: "2", TRUST_PROXY: "1" }));
    const from = (ip: string) => getFrom(s.url + PATH, "127.0.0.1", { "x-forwarded-for": ip });
    expect((await from("10.0.0.1")).status).toBe(200);
    expect((await from("10.0.0.1")).status).toBe(200);
    expect((await from("10.0.0.1")).status).toBe(429);
    const other = await from("10.0.0.2");
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/^"demo";r=1;/);
  });
});

describe("demo tier with an Authorization header", () => {
  const keyed = async (env: Record<string, string> = {}) => {
    const keys = fakeKeys();
    const t = await open(testApp({ DEMO_HOURLY_LIMIT: "2", ...env }, (deps) => ({ keys: keysOver(deps, keys, keys) })));
    const get = (authorization?: string) => t.app.request(PATH, { headers: authorization ? { authorization } : {} });
    return { ...t, keys, get };
  };

  it("a valid key is verified on every call and not counted against the demo tier", async () => {
    const { get, keys } = await keyed();
    for (let i = 0; i < 5; i++) {
      const res = await get("Bearer alm_good");
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
    expect(keys.calls).toEqual(Array(5).fill("alm_good"));
    expect((await get()).headers.get("ratelimit")).toMatch(/^"demo";r=1;/);
  });

  // PRODUCT.md: rate-limited routes send RateLimit-Policy / RateLimit. A keyed GET spends the key's
  // (or its account's) rate limit, so it says what is left, as classify and /v1/usage do.
  it("a key with a rate limit gets its RateLimit headers on a GET, and on the 429 when it is spent", async () => {
    const { get } = await keyed();
    const ok = await get("Bearer alm_limited");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-policy")).toBe('"key";q=5;w=60');
    expect(ok.headers.get("ratelimit")).toBe('"key";r=3;t=30');
    const spent = await get("Bearer alm_spent");
    expect(spent.status).toBe(429);
    expect((await errorOf(spent)).error.reason).toBe("RATE_LIMITED");
    expect(spent.headers.get("retry-after")).toBe("30");
    expect(spent.headers.get("ratelimit")).toBe('"key";r=0;t=30');
  });

  it("an invalid key gets 401 INVALID, a malformed header 401 without reason; neither is counted", async () => {
    const { get } = await keyed();
    const rejected = await get("Bearer alm_nope");
    expect(rejected.status).toBe(401);
    expect((await errorOf(rejected)).error).toMatchObject({
      code: "unauthorized",
      reason: "INVALID",
      message: REJECTED_KEY_MESSAGE,
    });
    const malformed = await get("Basic dXNlcjpwYXNz");
    expect(malformed.status).toBe(401);
    const body = await errorOf(malformed);
    expect(body.error).toMatchObject({ code: "unauthorized", message: MISSING_KEY_MESSAGE });
    expect(body.error.reason).toBeUndefined();
    expect((await get()).headers.get("ratelimit")).toMatch(/^"demo";r=1;/);
  });

  it("when the verifier is down the call is served under the demo tier", async () => {
    const { get } = await keyed();
    const first = await get("Bearer alm_down");
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit")).toMatch(/^"demo";r=1;/);
    expect((await get("Bearer alm_down")).status).toBe(200);
    const limited = await get("Bearer alm_down");
    expect(limited.status).toBe(429);
    expect((await errorOf(limited)).error.reason).toBe("DEMO_HOURLY_LIMIT");
  });

  it("without a key store, a keyed GET is served under the demo tier", async () => {
    // The app always has its key service: the demo tier itself, with no `keys`, behind the app's envelope.
    const { deps } = await open(testApp({ DEMO_HOURLY_LIMIT: "2" }));
    const env = Envelope.of(deps);
    const app = new Hono<AppEnv>();
    app.use(envelope(env, deps.logger));
    app.use("/v1/*", demoTier({ limiter: deps.limiter, rule: env.demo }));
    app.get("/v1/holidays", (c) => c.json({}));
    const res = await app.request(PATH, { headers: { authorization: "Bearer alm_anything" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit")).toMatch(/^"demo";r=1;/);
  });
});

describe.skipIf(!REDIS_URL)(`demo tier shared through Redis ${skipReason({ redis: true }) ?? ""}`, () => {
  // A client address no other test (or earlier run) uses, so its counter starts at zero; its
  // key is deleted at the end (it would expire within the hour anyway).
  const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  let a: TestApp;
  let b: TestApp;

  it("two app instances on one Redis share one count per IP", async () => {
    const env = { REDIS_URL, TRUST_PROXY: "1" };
    a = await testApp(env);
    b = await testApp(env);
    opened.push(a, b);
    await redisReady([a, b]);
    const get = (t: TestApp) => t.app.request(PATH, { headers: { "x-forwarded-for": ip } });
    for (let i = 1; i <= 60; i++) {
      const res = await get(i % 2 ? a : b);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toMatch(new RegExp(`^"demo";r=${60 - i};`));
    }
    for (const t of [a, b]) {
      const res = await get(t);
      expect(res.status).toBe(429);
      expect((await errorOf(res)).error.reason).toBe("DEMO_HOURLY_LIMIT");
    }
    await a.deps.redis?.del(`${a.config.REDIS_KEY_PREFIX}rl:demo:${ip}`);
  });
});

describe.skipIf(!REDIS_URL)(`REDIS_KEY_PREFIX on one Redis ${skipReason({ redis: true }) ?? ""}`, () => {
  it("deployments with their own prefixes count apart; instances with one prefix count together", async () => {
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const prefix = (name: string) => `almanac:${name}-${randomInt(1e9)}:`;
    const env = (p: string) => ({ REDIS_URL, TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: "2", REDIS_KEY_PREFIX: p });
    const [one, other] = [prefix("one"), prefix("other")];
    const [a, b, c] = [await testApp(env(one)), await testApp(env(one)), await testApp(env(other))];
    opened.push(a, b, c);
    await redisReady([a, b, c]);
    const status = async (t: TestApp) => (await t.app.request(PATH, { headers: { "x-forwarded-for": ip } })).status;
    expect([await status(a), await status(b), await status(a)]).toEqual([200, 200, 429]);
    expect([await status(c), await status(c), await status(c)]).toEqual([200, 200, 429]);
    expect(await a.deps.redis?.get(`${one}rl:demo:${ip}`)).toBe("3");
    expect(await a.deps.redis?.get(`${other}rl:demo:${ip}`)).toBe("3");
    await a.deps.redis?.del(`${one}rl:demo:${ip}`, `${other}rl:demo:${ip}`);
  });
});
