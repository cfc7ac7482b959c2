import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisKeyPrefix, skippedBecause, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { hasRedisServer, PrivateRedis } from "../helpers/redis-server.js";
import { type Answer, expectErrorShape, send } from "./support.js";

const LIMIT = 20;
let redis: PrivateRedis;
let server: ServerProcess;

/** TRUST_PROXY=1: each phase is its own client, so its demo budget starts full. */
const moon = (ip: string) => send(`${server.url}/v1/moon?date=2024-01-25`, { headers: { "X-Forwarded-For": ip } });
const ready = async () => (await send(`${server.url}/readyz`)).status;

async function burst(ip: string, n: number): Promise<{ statuses: number[]; maxMs: number; answers: Answer[] }> {
  const answers: Answer[] = [];
  for (let i = 0; i < n; i++) answers.push(await moon(ip));
  return { statuses: answers.map((a) => a.status), maxMs: Math.max(...answers.map((a) => a.ms)), answers };
}

/** The demo counter Redis holds for `ip` (rate-limiter-flexible's key: prefix, rule, client). */
async function sharedCount(ip: string): Promise<number | null> {
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const v = await client.get(`${redisKeyPrefix()}rl:demo:${ip}`);
    return v === null ? null : Number(v);
  } finally {
    client.disconnect();
  }
}

const expected = (allowed: number, refused: number) => [
  ...Array<number>(allowed).fill(200),
  ...Array<number>(refused).fill(429),
];

beforeAll(async () => {
  if (!hasRedisServer) return;
  redis = await PrivateRedis.start();
  server = await spawnServer({
    DATA_DIR: tempDir(),
    LOG_LEVEL: "silent",
    REDIS_URL: redis.url,
    TRUST_PROXY: "1",
    DEMO_HOURLY_LIMIT: String(LIMIT),
  });
});

afterAll(async () => {
  await stop(server);
  await redis?.stop();
});

describe.skipIf(!hasRedisServer)(
  `a private Redis stopped and paused under a running server${skippedBecause(!hasRedisServer, "redis-server is not installed")}`,
  () => {
    it("keeps answering under local limits, reports not ready, and shares counts again after recovery", async () => {
      const pid = server.proc.pid;
      const latency: Record<string, number> = {};

      // Healthy: the demo tier counts in Redis.
      expect((await burst("203.0.113.1", 3)).statuses).toEqual(expected(3, 0));
      expect(await sharedCount("203.0.113.1")).toBe(3);
      expect(await ready()).toBe(200);

      // Paused (SIGSTOP): commands time out, the process limiter decides; the tier is still enforced.
      redis.pause();
      const paused = await burst("203.0.113.2", LIMIT + 3);
      latency.paused = paused.maxMs;
      expect(paused.statuses).toEqual(expected(LIMIT, 3));
      const refused = paused.answers.at(-1) as Answer;
      expect(expectErrorShape(refused.status, refused.body, refused.headers["x-request-id"] as string)).toBe(
        "rate_limited",
      );
      expect(JSON.parse(refused.body).error.reason).toBe("DEMO_HOURLY_LIMIT");
      expect(await ready()).toBe(503);

      redis.resume();
      const back = await pollReady();
      expect(back).toBe(200);
      // Shared again: the budget spent before the pause is still there, and grows in Redis.
      expect((await burst("203.0.113.1", 2)).statuses).toEqual(expected(2, 0));
      expect(await sharedCount("203.0.113.1")).toBe(5);

      // Stopped: connection refused, the same local fallback.
      await redis.stop();
      const stopped = await burst("203.0.113.3", LIMIT + 3);
      latency.stopped = stopped.maxMs;
      expect(stopped.statuses).toEqual(expected(LIMIT, 3));
      const body = JSON.parse((await send(`${server.url}/readyz`)).body);
      expect(body).toEqual({ status: "not_ready", checks: { database: "ok", redis: "down" } });

      // Restarted on the same port: the client reconnects by itself, no restart of the app.
      await redis.start();
      expect(await pollReady()).toBe(200);
      expect((await burst("203.0.113.4", 4)).statuses).toEqual(expected(4, 0));
      expect(await sharedCount("203.0.113.4")).toBe(4);
      expect(server.proc.pid).toBe(pid);
      expect(server.proc.exitCode).toBeNull();
      console.info(
        `redis outage: max latency while paused ${Math.round(latency.paused ?? 0)} ms, while stopped ${Math.round(latency.stopped ?? 0)} ms`,
      );
    });
  },
);

async function pollReady(): Promise<number> {
  const deadline = Date.now() + 20_000;
  let status = await ready();
  while (status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    status = await ready();
  }
  return status;
}
