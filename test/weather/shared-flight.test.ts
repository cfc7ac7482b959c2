import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { errorOf, redisReady, type TestApp, testApp } from "../helpers/app.js";
import { REDIS_URL, skipReason } from "../helpers/env.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two instances sharing one Redis (the production wiring: REDIS_URL, this file's own key prefix).
 * A burst of 50 requests for one uncached key, half to each, while the upstream holds its answer:
 * the fakes' request logs say how many upstream calls the burst cost.
 */
describe.skipIf(!REDIS_URL)(`one upstream call per burst across instances ${skipReason({ redis: true }) ?? ""}`, () => {
  let postcodes: UpstreamFake;
  let meteo: UpstreamFake;
  let apps: [TestApp, TestApp];

  beforeAll(async () => {
    postcodes = await fakePostcodesIo();
    meteo = await fakeOpenMeteo();
    const env = {
      REDIS_URL,
      POSTCODES_BASE_URL: postcodes.url,
      OPEN_METEO_BASE_URL: meteo.url,
      DEMO_HOURLY_LIMIT: "1000000",
      UPSTREAM_TIMEOUT_MS: "2000",
    };
    apps = [await testApp(env), await testApp(env)];
    await redisReady(apps);
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    await Promise.all([postcodes.close(), meteo.close()]);
  });
  beforeEach(() => {
    postcodes.reset();
    meteo.reset();
  });

  /** 50 requests for `path`, alternating instances, with `held` holding its answers for 400 ms after its first call. */
  async function burst(path: string, held: UpstreamFake): Promise<Response[]> {
    held.gate();
    const pending = Array.from({ length: 50 }, (_, i) => (apps[i % 2] as TestApp).app.request(path));
    while (held.paths.length === 0) await sleep(5);
    await sleep(400);
    held.release();
    return Promise.all(pending);
  }

  it("50 concurrent /v1/postcode requests on two instances → 1 postcodes.io call", async () => {
    const answers = await burst("/v1/postcode?postcode=SW1A2AA", postcodes);
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
  });

  it("50 concurrent /v1/weather requests on two instances → 1 postcodes.io and 1 Open-Meteo call", async () => {
    postcodes.gate();
    const pending = Array.from({ length: 50 }, (_, i) =>
      (apps[i % 2] as TestApp).app.request("/v1/weather?postcode=EH11YZ"),
    );
    while (postcodes.paths.length === 0) await sleep(5);
    meteo.gate();
    await sleep(400);
    postcodes.release();
    while (meteo.paths.length === 0) await sleep(5);
    await sleep(400);
    meteo.release();
    const answers = await Promise.all(pending);
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(postcodes.paths).toHaveLength(1);
    expect(meteo.paths).toHaveLength(1);
  });

  it("a retired postcode's two calls are made once, and its 404 shared", async () => {
    const answers = await burst("/v1/postcode?postcode=E1W1UU", postcodes);
    expect(new Set(answers.map((r) => r.status))).toEqual(new Set([404]));
    expect((await errorOf(answers[1] as Response)).error.reason).toBe("terminated");
    expect(postcodes.paths).toEqual(["/postcodes/E1W%201UU", "/terminated_postcodes/E1W%201UU"]);
  });

  it("a failed call fails every waiter on both instances with the spec's 502, once, and is not cached", async () => {
    postcodes.fault = "500";
    const started = Date.now();
    const answers = await burst("/v1/postcode?postcode=GY11AA", postcodes);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(502));
    for (const r of answers.slice(0, 2)) {
      expect((await errorOf(r)).error).toMatchObject({
        code: "upstream_error",
        message: "The postcode resolver failed; try again shortly.",
      });
    }
    expect(postcodes.paths).toHaveLength(1);
    postcodes.fault = null;
    expect((await apps[1].app.request("/v1/postcode?postcode=GY11AA")).status).toBe(200);
    expect(postcodes.paths).toHaveLength(2);
  });

  it("a load claimed by an instance that died holds the others back only until its lease lapses", async () => {
    const { config } = apps[0];
    const redis = apps[0].deps.redis as Redis;
    // A claim no one will finish, as a crashed instance leaves it.
    await redis.set(`${config.REDIS_KEY_PREFIX}cache:flight:postcode:v1:SW1A 1AA`, "crashed", "PX", 600);
    postcodes.gate();
    const started = Date.now();
    const pending = apps[1].app.request("/v1/postcode?postcode=SW1A1AA");
    await sleep(300);
    expect(postcodes.paths).toEqual([]);
    postcodes.release();
    expect((await pending).status).toBe(404);
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(postcodes.paths).toEqual(["/postcodes/SW1A%201AA", "/terminated_postcodes/SW1A%201AA"]);
  });
});
