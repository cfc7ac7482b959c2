import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skippedBecause, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { hasRedisSentinel, SENTINEL_NAME, SentinelGroup } from "../helpers/redis-sentinel.js";
import { authSecret } from "../scale/support.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import { chargesPerKey, type LoadKey, MixedLoad, mailsPerMessage, summarise } from "./support/mixed-load.js";
import { type Answer, send, settle } from "./support.js";

/** The demo tier's budget per client (an hour's window: it never renews during the test). */
const LIMIT = 20;
/** One client that has spent its budget (counted on the primary before the load) and keeps asking, through both instances. */
const GREEDY = "203.0.113.7";
/** Each instance's start compiles the sources (tsx): slow on a loaded machine. */
const SLOW_START = { startTimeoutMs: 60_000 };
/** Operations a second of the mixed load (keyed classify, lookups, contact, sign-in), beside the greedy client. */
const RATE = Number(process.env.FAILOVER_RATE ?? 100);
const USES = 10;
const PUBLIC_URL = "http://localhost:8080";
const why = hasRedisSentinel
  ? DATABASE_URL
    ? undefined
    : "DATABASE_URL is not set (.ci/run sets it)"
  : "redis-server or redis-sentinel is not installed";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const demoKey = (ip: string) => `almanac:rl:demo:${ip}`;

let group: SentinelGroup;
let smtp: SmtpTestServer;
let pg: { url: string; drop: () => Promise<void> };
const servers: ServerProcess[] = [];
/** One key per keyed classify operation, so each one's charge is exact. */
const keys: LoadKey[] = [];

beforeAll(async () => {
  if (why) return;
  group = await SentinelGroup.start();
  pg = await freshPostgresUrl();
  smtp = await startSmtpServer();
  const env = {
    DATABASE_URL: pg.url,
    MAIL_URL: smtp.url,
    PUBLIC_URL,
    AUTH_SECRET: authSecret(),
    REDIS_SENTINELS: group.sentinels,
    REDIS_SENTINEL_NAME: SENTINEL_NAME,
    TRUST_PROXY: "1",
    DEMO_HOURLY_LIMIT: String(LIMIT),
    ANSWER_CACHE_MB: "0",
    LOG_LEVEL: "info",
  };
  servers.push(...(await Promise.all([1, 2].map(() => spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START)))));
  const maker = await testApp({ DATABASE_URL: pg.url });
  try {
    for (let i = 0; i < 1000; i += 50) {
      const made = await Promise.all(
        Array.from({ length: 50 }, () =>
          maker.deps.keys.create({ name: "sentinel", permissions: ["vibe.classify"], remaining: USES }),
        ),
      );
      keys.push(...made.map((k) => ({ id: k.id, key: k.key })));
    }
  } finally {
    await maker.close();
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => stop(s)));
  await group?.stop();
  await smtp?.close();
  await pg?.drop();
});

interface Sent {
  at: number;
  ip: string;
  answer?: Answer;
  error?: string;
}

describe.skipIf(Boolean(why))(
  `Redis Sentinel: a failover under mixed load over two instances${skippedBecause(Boolean(why), why ?? "")}`,
  () => {
    it("answers only 200, 4xx or 503 with Retry-After, stays within one budget too many, and counts on the new primary without a restart", async () => {
      const pids = servers.map((s) => s.proc.pid);
      const [first, second] = group.dataPorts;
      expect(await group.primary()).toBe(first);

      // The greedy client's budget is spent on the primary (and copied to the replica); it keeps asking.
      await group.ask(first, "SET", demoKey(GREEDY), String(LIMIT), "EX", "3600");
      // The mixed load, and the greedy client beside it.
      const load = new MixedLoad({ instances: servers.map((s) => s.url), rate: RATE, keys, publicUrl: PUBLIC_URL });
      load.start();
      const sent: Sent[] = [];
      let running = true;
      // One request at a time (up to 20 a second), so a slow host slows it instead of piling up sockets.
      const greedyLoop = (async () => {
        for (let i = 0; running; i++) {
          const entry: Sent = { at: Date.now(), ip: GREEDY };
          sent.push(entry);
          await send(`${servers[i % 2]?.url}/v1/moon?date=2024-01-25`, {
            headers: { "X-Forwarded-For": GREEDY },
            limitMs: 30_000,
          }).then(
            (answer) => {
              entry.answer = answer;
            },
            (err: Error) => {
              entry.error = err.message;
            },
          );
          await sleep(50);
        }
      })();

      // Before: the instances count the greedy client on the primary, and refuse it.
      const before = await settle(
        () => sent.filter((x) => x.answer || x.error).length,
        (n) => n >= 3,
        60_000,
      );
      expect(before, "the greedy client's first answers").toBeGreaterThanOrEqual(3);
      const answeredBefore = sent.filter((x) => x.answer || x.error);
      expect(answeredBefore.map((x) => x.answer?.status ?? x.error)).toEqual(answeredBefore.map(() => 429));
      await sleep(2000);

      const started = Date.now();
      load.mark("SENTINEL FAILOVER");
      await group.failover();
      // The replica takes writes once promoted; until then it copies the primary, so a count
      // read there only shows where the instances write after that moment.
      // Sentinel drops the replica's clients as it promotes it (CLIENT KILL): a read cut that way is read again.
      const role = async () => ((await group.ask(second, "ROLE").catch(() => [""])) as [string])[0];
      expect(await settle(role, (r) => r === "master", 30_000), "the replica is promoted").toBe("master");
      const promoted = Date.now() - started;
      load.mark("replica promoted");
      // Recovery, per instance: the first request after the promotion counted on the new primary
      // (a fresh client each time, so its count there is exactly 1 once it is counted in Redis).
      const recovered: number[] = [];
      const readiness: number[] = [];
      for (const [i, server] of servers.entries()) {
        let counted = false;
        for (let probe = 0; !counted && Date.now() - started < 60_000; probe++) {
          const ip = `10.${i}.${Math.floor(probe / 250)}.${(probe % 250) + 1}`;
          // An instance slow to answer under the load is seen by the load's figures; the probe looks again.
          const answer = await send(`${server.url}/v1/moon?date=2024-01-25`, {
            headers: { "X-Forwarded-For": ip },
          }).catch(() => undefined);
          readiness.push((await send(`${server.url}/readyz`).catch(() => undefined))?.status ?? 0);
          counted =
            answer?.status === 200 && Number(await group.ask(second, "GET", demoKey(ip)).catch(() => null)) === 1;
          if (!counted) await sleep(50);
        }
        recovered.push(counted ? Date.now() - started : Number.NaN);
      }
      load.mark("counted on the new primary by both instances");
      await sleep(3000);
      running = false;
      await greedyLoop;
      const report = await load.stop();
      await sleep(1000); // the last mails' arrival at the desk

      // The figures first, so that a failing run still reports them. Each instance's log line
      // naming the new primary, in ms after the failover was asked for.
      const logged = servers.map((s) => {
        const line = s
          .output()
          .split("\n")
          .find((l) => l.includes('"msg":"redis primary changed"'));
        return line ? (JSON.parse(line) as { time: number }).time - started : Number.NaN;
      });
      const figures = summarise(
        report,
        await chargesPerKey(pg.url, report.operations, USES),
        mailsPerMessage(smtp.messages, report.operations),
      );
      const allowed = sent.filter((s) => s.answer?.status === 200).length;
      const fallbacks = await Promise.all(
        servers.map(async (s) => {
          const text = (await send(`${s.url}/metrics`)).body;
          return [...text.matchAll(/^rate_limiter_fallback_total\{[^}]*\} (\d+)/gm)].reduce(
            (t, m) => t + Number(m[1]),
            0,
          );
        }),
      );
      console.info(
        `redis sentinel failover: mixed load ${JSON.stringify({ durationMs: report.durationMs, byStatus: report.byStatus, byKind: report.byKind, marks: report.marks, classify: figures.classify, contact: figures.contact })}; ` +
          `replica promoted after ${promoted} ms, logged the new primary after ${logged.join(" ms and ")} ms, counted on it again after ${recovered.join(" ms and ")} ms; /readyz while switching ${JSON.stringify(readiness)}; ` +
          `the greedy client allowed ${allowed} of ${sent.length} with a budget of ${LIMIT}; in-process limiter decisions ${fallbacks.join(", ")}`,
      );

      expect(recovered.map(Number.isFinite), "each instance counted on the new primary within 60 s").toEqual([
        true,
        true,
      ]);
      // The Sentinels name the replica now; the instances were never restarted.
      expect(await group.primary()).toBe(second);
      expect(servers.map((s) => s.proc.pid)).toEqual(pids);
      expect(servers.map((s) => s.proc.exitCode)).toEqual([null, null]);
      for (const s of servers) expect((await send(`${s.url}/readyz`)).status).toBe(200);

      // Every request got an answer: 200, a 4xx, or a 503 that says when to retry.
      expect(sent.filter((s) => s.error).map((s) => s.error)).toEqual([]);
      for (const { answer } of sent) {
        const status = answer?.status ?? 0;
        const fine = status === 200 || status === 429;
        expect(fine, `the greedy client was answered ${status}: ${answer?.body}`).toBe(true);
      }
      expect(report.violations).toEqual([]);
      expect(report.byStatus.error, "connection errors").toBeUndefined();
      expect(report.unfinished.map((o) => `${o.kind} #${o.id}`)).toEqual([]);
      // Keyed calls charged once each, contact messages mailed once each.
      expect(figures.classify.ok).toBe(figures.classify.operations);
      expect(figures.classify.charged).toEqual({ 1: figures.classify.operations });
      expect(figures.contact.ok).toBe(figures.contact.operations);
      expect(figures.contact.mailed).toEqual({ 1: figures.contact.operations });

      // The greedy client: at most one budget more across the switch.
      expect(allowed).toBeLessThanOrEqual(LIMIT);
      // Counted on the new primary: what the replica had, plus what came since.
      expect(Number(await group.ask(second, "GET", demoKey(GREEDY)))).toBeGreaterThan(LIMIT);

      // What an operator sees: each instance logs the switch with both addresses.
      for (const s of servers) {
        expect(s.output()).toContain(
          `"redis":"127.0.0.1:${second}","was":"127.0.0.1:${first}","msg":"redis primary changed"`,
        );
      }
    }, 300_000);
  },
);
