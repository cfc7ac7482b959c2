import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryCache, RedisCache } from "../../src/adapters/cache.js";
import { createRedis } from "../../src/adapters/redis.js";
import { CachedLoader } from "../../src/features/shared/cached-loader.js";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { redisReady, type TestApp, testApp } from "../helpers/app.js";
import { REDIS_URL, skipReason } from "../helpers/env.js";

describe("MemoryCache and CachedLoader", () => {
  it("forgets an entry after its time to live", async () => {
    const cache = new MemoryCache();
    await cache.set("k", { v: 1 }, 20);
    expect(await cache.get("k")).toEqual({ v: 1 });
    await new Promise((r) => setTimeout(r, 60));
    expect(await cache.get("k")).toBeUndefined();
  });

  it("gives each value its own time to live (negative answers live shorter)", async () => {
    const cache = new MemoryCache();
    const loader = new CachedLoader(cache);
    const ttl = (v: string) => (v === "unknown" ? 20 : 60_000);
    await loader.load("a", ttl, async () => "unknown");
    await loader.load("b", ttl, async () => "found");
    await new Promise((r) => setTimeout(r, 60));
    expect(await cache.get("a")).toBeUndefined();
    expect(await cache.get("b")).toBe("found");
  });
});

describe("RedisCache falls back to memory when Redis errors", () => {
  it("keeps caching in process while Redis is unreachable, and says so", async () => {
    // Nothing listens on port 1; the client has no offline queue, so every command fails at once.
    const dead = createRedis({ REDIS_URL: "redis://127.0.0.1:1" }, pino({ level: "silent" }));
    let fallbacks = 0;
    const cache = new RedisCache(dead, { onFallback: () => fallbacks++ });
    try {
      await cache.set("k", { place: "SW1A 2AA" }, 60_000);
      expect(await cache.get("k")).toEqual({ place: "SW1A 2AA" });
      expect(fallbacks).toBe(2);
      // Loads are not shared between instances then: each process claims its own and loads.
      const loader = new CachedLoader(cache);
      expect(
        await loader.load(
          "p",
          () => 60_000,
          async () => "found",
        ),
      ).toBe("found");
      expect(await cache.get("p")).toBe("found");
    } finally {
      dead.disconnect();
    }
  });
});

describe.skipIf(!REDIS_URL)(`weather caches shared through Redis ${skipReason({ redis: true }) ?? ""}`, () => {
  const prefix = `almanac:test:${randomBytes(6).toString("hex")}:`;
  let postcodes: UpstreamFake;
  let meteo: UpstreamFake;
  const apps: TestApp[] = [];
  let admin: Redis;

  const instance = () =>
    testApp(
      {
        REDIS_URL,
        POSTCODES_BASE_URL: postcodes.url,
        OPEN_METEO_BASE_URL: meteo.url,
        DEMO_HOURLY_LIMIT: "1000000",
      },
      (d) => ({ cache: new RedisCache(d.redis as Redis, { prefix }) }),
    );

  beforeAll(async () => {
    postcodes = await fakePostcodesIo();
    meteo = await fakeOpenMeteo();
    apps.push(await instance(), await instance());
    // The client has no offline queue: until it is connected the cache (rightly) falls back to memory.
    await redisReady(apps);
    admin = new Redis(REDIS_URL as string);
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length) await admin.del(...keys);
    admin.disconnect();
    for (const a of apps) await a.close();
    await Promise.all([postcodes.close(), meteo.close()]);
  });

  it("a second instance answers from the first one's cache without calling upstream", async () => {
    const [a, b] = apps as [TestApp, TestApp];
    expect((await a.app.request("/v1/weather?postcode=SW1A2AA")).status).toBe(200);
    expect(postcodes.paths).toHaveLength(1);
    expect(meteo.paths).toHaveLength(1);
    const res = await b.app.request("/v1/weather?postcode=sw1a%202aa");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { location: { postcode: string } }).location.postcode).toBe("SW1A 2AA");
    expect(postcodes.paths).toHaveLength(1);
    expect(meteo.paths).toHaveLength(1);
  });

  it("stores places for 7 days, forecasts for 15 minutes and unknown postcodes for an hour", async () => {
    const [a] = apps as [TestApp];
    expect((await a.app.request("/v1/postcode?postcode=ZE99ZZ")).status).toBe(404);
    const ttl = async (key: string) => admin.pttl(`${prefix}${key}`);
    const day = 24 * 3600_000;
    expect(await ttl("postcode:v1:SW1A 2AA")).toBeGreaterThan(7 * day - 60_000);
    expect(await ttl("postcode:v1:ZE9 9ZZ")).toBeGreaterThan(3600_000 - 60_000);
    expect(await ttl("postcode:v1:ZE9 9ZZ")).toBeLessThanOrEqual(3600_000);
    expect(await ttl("forecast:v1:51.50,-0.13")).toBeGreaterThan(15 * 60_000 - 60_000);
    expect(await ttl("forecast:v1:51.50,-0.13")).toBeLessThanOrEqual(15 * 60_000);
    const before = postcodes.paths.length;
    expect((await apps[1]?.app.request("/v1/postcode?postcode=ZE99ZZ"))?.status).toBe(404);
    expect(postcodes.paths).toHaveLength(before);
  });
});
