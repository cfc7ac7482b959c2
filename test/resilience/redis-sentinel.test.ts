import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skippedBecause, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { hasRedisSentinel, SENTINEL_NAME, SentinelGroup } from "../helpers/redis-sentinel.js";
import { type Answer, send, settle } from "./support.js";

/** The demo tier's budget per client (an hour's window: it never renews during the test). */
const LIMIT = 40;
/** One client that spends its budget early and keeps asking, through both instances. */
const GREEDY = "203.0.113.7";
/** Each instance's start compiles the sources (tsx): slow on a loaded machine. */
const SLOW_START = { startTimeoutMs: 60_000 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const demoKey = (ip: string) => `almanac:rl:demo:${ip}`;

let group: SentinelGroup;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  if (!hasRedisSentinel) return;
  group = await SentinelGroup.start();
  const env = {
    REDIS_SENTINELS: group.sentinels,
    REDIS_SENTINEL_NAME: SENTINEL_NAME,
    TRUST_PROXY: "1",
    DEMO_HOURLY_LIMIT: String(LIMIT),
    ANSWER_CACHE_MB: "0",
    LOG_LEVEL: "info",
  };
  servers.push(...(await Promise.all([1, 2].map(() => spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START)))));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => stop(s)));
  await group?.stop();
});

interface Sent {
  at: number;
  ip: string;
  answer?: Answer;
  error?: string;
}

describe.skipIf(!hasRedisSentinel)(
  `Redis Sentinel: a failover under load over two instances${skippedBecause(!hasRedisSentinel, "redis-server or redis-sentinel is not installed")}`,
  () => {
    it("answers only 200, 4xx or 503 with Retry-After, stays within one budget too many, and counts on the new primary without a restart", async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const pids = servers.map((s) => s.proc.pid);
      const [first, second] = group.dataPorts;
      expect(await group.primary()).toBe(first);

      // Load: ~100 requests/s over both instances: lookups from many clients, and the greedy one.
      const sent: Sent[] = [];
      let n = 0;
      let running = true;
      const load = (async () => {
        const inflight: Promise<void>[] = [];
        while (running) {
          const i = n++;
          const ip = i % 4 === 0 ? GREEDY : `198.51.100.${(i % 200) + 1}`;
          const server = i % 2 ? a : b;
          const entry: Sent = { at: Date.now(), ip };
          sent.push(entry);
          inflight.push(
            send(`${server.url}/v1/moon?date=2024-01-${String((i % 28) + 1).padStart(2, "0")}`, {
              headers: { "X-Forwarded-For": ip },
            }).then(
              (answer) => {
                entry.answer = answer;
              },
              (err: Error) => {
                entry.error = err.message;
              },
            ),
          );
          await sleep(10);
        }
        await Promise.all(inflight);
      })();

      // Before: the greedy client spends its budget, counted on the primary.
      const spent = await settle(
        async () => Number(await group.ask(first, "GET", demoKey(GREEDY))),
        (c) => c > LIMIT,
        30_000,
      );
      expect(spent).toBeGreaterThan(LIMIT);

      const started = Date.now();
      await group.failover();
      // The replica takes writes once promoted; until then it copies the primary, so a count
      // read there only shows where the instances write after that moment.
      const role = async () => ((await group.ask(second, "ROLE")) as [string])[0];
      expect(await settle(role, (r) => r === "master", 30_000), "the replica is promoted").toBe("master");
      const promoted = Date.now() - started;
      // Recovery, per instance: the first request after the promotion counted on the new primary
      // (a fresh client each time, so its count there is exactly 1 once it is counted in Redis).
      const recovered: number[] = [];
      const readiness: number[] = [];
      for (const [i, server] of servers.entries()) {
        for (let probe = 0; ; probe++) {
          const ip = `10.${i}.${Math.floor(probe / 250)}.${(probe % 250) + 1}`;
          const answer = await send(`${server.url}/v1/moon?date=2024-01-25`, { headers: { "X-Forwarded-For": ip } });
          readiness.push((await send(`${server.url}/readyz`)).status);
          if (answer.status === 200 && Number(await group.ask(second, "GET", demoKey(ip))) === 1) break;
          expect(Date.now() - started, `instance ${i + 1} never counted on the new primary`).toBeLessThan(30_000);
          await sleep(50);
        }
        recovered.push(Date.now() - started);
      }
      await sleep(3000);
      running = false;
      await load;

      // The Sentinels name the replica now; the instances were never restarted.
      expect(await group.primary()).toBe(second);
      expect(servers.map((s) => s.proc.pid)).toEqual(pids);
      expect(servers.map((s) => s.proc.exitCode)).toEqual([null, null]);
      for (const s of servers) expect((await send(`${s.url}/readyz`)).status).toBe(200);

      // Every request got an answer: 200, a 4xx, or a 503 that says when to retry.
      const errors = sent.filter((s) => s.error);
      expect(errors.map((s) => s.error)).toEqual([]);
      const byStatus: Record<string, number> = {};
      for (const { answer } of sent) {
        const status = answer?.status ?? 0;
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        const fine =
          status === 200 || (status >= 400 && status < 500) || (status === 503 && answer?.headers["retry-after"]);
        expect(fine, `answered ${status}: ${answer?.body}`).toBeTruthy();
      }

      // The greedy client: its budget once, and at most one budget more across the switch.
      const greedy = sent.filter((s) => s.ip === GREEDY);
      const allowed = greedy.filter((s) => s.answer?.status === 200).length;
      expect(allowed).toBeGreaterThanOrEqual(LIMIT);
      expect(allowed).toBeLessThanOrEqual(2 * LIMIT);
      // Counted on the new primary: what the replica had, plus what came since.
      expect(Number(await group.ask(second, "GET", demoKey(GREEDY)))).toBeGreaterThan(LIMIT);

      // What an operator sees: each instance logs the switch with both addresses.
      for (const s of servers) {
        expect(s.output()).toContain(
          `"redis":"127.0.0.1:${second}","was":"127.0.0.1:${first}","msg":"redis primary changed"`,
        );
      }
      const fallbacks = await Promise.all(
        servers.map(async (s) => {
          const text = (await send(`${s.url}/metrics`)).body;
          return [...text.matchAll(/^rate_limiter_fallback_total\{[^}]*\} (\d+)/gm)].reduce(
            (t, m) => t + Number(m[1]),
            0,
          );
        }),
      );
      const seconds = (sent.at(-1)?.at ?? 0) - (sent[0]?.at ?? 0);
      console.info(
        `redis sentinel failover: ${sent.length} requests in ${(seconds / 1000).toFixed(1)} s over two instances, by status ${JSON.stringify(byStatus)}; ` +
          `replica promoted after ${promoted} ms, counted on the new primary again after ${recovered.join(" ms and ")} ms; /readyz while switching ${JSON.stringify(readiness)}; ` +
          `the greedy client allowed ${allowed} with a budget of ${LIMIT}; in-process limiter decisions ${fallbacks.join(", ")}`,
      );
    });
  },
);
