import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";
import pino from "pino";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { afterAll, describe, expect, it, vi } from "vitest";
import { leaseSize, SqliteRateLimiter } from "../../src/adapters/limiter.js";
import { MemoryRateLimiter } from "../../src/adapters/memory-limiter.js";
import { PromMetrics as Metrics } from "../../src/adapters/metrics.js";
import { createRedis, untilReady } from "../../src/adapters/redis.js";
import { RedisRateLimiter } from "../../src/adapters/redis-limiter.js";
import { openSqliteFile } from "../../src/db/sqlite.js";
import { REDIS_URL, skippedBecause, skipReason, tempDir } from "../helpers/env.js";
import { hasRedisServer, PrivateRedis } from "../helpers/redis-server.js";

const logger = pino({ level: "silent" });
const rule = (points: number) => ({ name: `t-${randomBytes(4).toString("hex")}`, points, durationSec: 60 });

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

describe("in-process limiter", () => {
  it("allows `points` per window per key, then refuses with the time to reset", async () => {
    const limiter = new MemoryRateLimiter();
    const r = rule(3);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(r, "ip-a"));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[3]?.resetMs).toBeGreaterThan(0);
    expect(decisions[3]?.resetMs).toBeLessThanOrEqual(60_000);
    expect((await limiter.consume(r, "ip-b")).allowed).toBe(true);
  });
});

describe("in-process limiter under a flood of distinct clients", () => {
  it("counts at most maxKeys keys one by one; newcomers past that share one window, so a flood errs on limiting", async () => {
    let clock = 1_000_000;
    const limiter = new MemoryRateLimiter(3, () => clock);
    const r = rule(2);
    for (const k of ["a", "b", "c"]) expect(await limiter.consume(r, k)).toMatchObject({ allowed: true, remaining: 1 });
    // d, e and f each spend 1 of the one shared budget of 2.
    expect(await limiter.consume(r, "d")).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(r, "e")).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.consume(r, "f")).allowed).toBe(false);
    expect(await limiter.consume(r, "f", 0)).toMatchObject({ allowed: false });
    expect(limiter.size(r)).toBe(3);
    // Keys with a window of their own keep their own count.
    expect(await limiter.consume(r, "a")).toMatchObject({ allowed: true, remaining: 0 });
    // Once the windows end, their places are free again and a newcomer counts on its own.
    clock += 60_000;
    expect(await limiter.consume(r, "g")).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(r, "h")).toMatchObject({ allowed: true, remaining: 1 });
  });

  it("holds its bound under 200,000 distinct keys, and windows that have ended give their places back", async () => {
    let clock = 0;
    const limiter = new MemoryRateLimiter(1_000, () => clock);
    const r = rule(5);
    for (let i = 0; i < 200_000; i++) await limiter.consume(r, `2001:db8:${i}::/64`);
    expect(limiter.size(r)).toBe(1_000);
    clock += 61_000;
    // The ended windows hold no places: each of 1,000 newcomers gets a window of its own (4 left),
    // none is pushed into the shared one.
    const remaining = new Set<number>();
    for (let i = 0; i < 1_000; i++) remaining.add((await limiter.consume(r, `198.51.${i >> 8}.${i & 255}`)).remaining);
    expect([...remaining]).toEqual([4]);
    expect(limiter.size(r)).toBe(1_000);
  });

  it("a refund gives back to the window that was charged, and a reset forgets the key", async () => {
    const limiter = new MemoryRateLimiter(1);
    const r = rule(1);
    await limiter.consume(r, "a");
    await limiter.consume(r, "b"); // the overflow window
    await limiter.refund(r, "b");
    expect(await limiter.consume(r, "c")).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.reset(r, "a");
    expect(await limiter.consume(r, "a", 0)).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe("embedded limiter (DATA_DIR/limits.db)", () => {
  it("two limiters on one data directory (two workers) share one count; a refund and a reset give points back", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const two = new SqliteRateLimiter(dir);
    try {
      const r = rule(10);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 ? one : two).consume(r, "203.0.113.9")),
      );
      expect(results.filter((d) => d.allowed)).toHaveLength(10);
      expect(
        results
          .filter((d) => d.allowed)
          .map((d) => d.remaining)
          .sort((a, b) => a - b),
      ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // 16 spent of 10: six refunds bring it to the limit, one more frees a point.
      await one.refund(r, "203.0.113.9", 7);
      expect(await two.consume(r, "203.0.113.9")).toMatchObject({ allowed: true, remaining: 0 });
      await two.reset(r, "203.0.113.9");
      expect(await one.consume(r, "203.0.113.9", 0)).toMatchObject({ allowed: true, remaining: 10 });
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("decisions taken in one turn commit together, and each is answered only once committed", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const reader = openSqliteFile(join(dir, "limits.db"), { readonly: true });
    try {
      const r = rule(50);
      const count = () =>
        (reader.prepare("SELECT points FROM rate_limits WHERE key = ?").get(`${r.name}:ip`) as { points: number })
          ?.points;
      const spent = Array.from({ length: 30 }, () => one.consume(r, "ip").then((d) => ({ d, committed: count() })));
      // Nothing is written while the turn that asked is still running.
      expect(count()).toBeUndefined();
      const answers = await Promise.all(spent);
      // Every caller saw the whole batch committed by another connection, and its own place in it.
      expect(answers.every((a) => a.committed === 30)).toBe(true);
      expect(answers.map((a) => a.d.remaining)).toEqual(Array.from({ length: 30 }, (_, i) => 49 - i));
    } finally {
      reader.close();
      await one.close();
    }
  });

  it("spending 0 points reads the count and writes nothing", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const reader = openSqliteFile(join(dir, "limits.db"), { readonly: true });
    try {
      const r = rule(2);
      const rows = () => (reader.prepare("SELECT count(*) AS n FROM rate_limits").get() as { n: number }).n;
      expect(await one.consume(r, "ip", 0)).toMatchObject({ allowed: true, remaining: 2 });
      expect(rows()).toBe(0);
      await one.consume(r, "ip", 3);
      expect(await one.consume(r, "ip", 0)).toMatchObject({ allowed: false, remaining: 0 });
      expect(rows()).toBe(1);
    } finally {
      reader.close();
      await one.close();
    }
  });

  it("a limits.db from before keeps its counts when its table moves to the WITHOUT ROWID layout", async () => {
    const dir = tempDir();
    const r = rule(5);
    const old = openSqliteFile(join(dir, "limits.db"));
    old.exec("CREATE TABLE rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL, expire INTEGER NOT NULL)");
    old.prepare("INSERT INTO rate_limits VALUES (?, 3, ?)").run(`${r.name}:ip`, Date.now() + 60_000);
    old.close();
    const limiters = [new SqliteRateLimiter(dir), new SqliteRateLimiter(dir)];
    expect((await limiters[0]?.consume(r, "ip"))?.remaining).toBe(1);
    for (const l of limiters) await l.close();
    const db = openSqliteFile(join(dir, "limits.db"), { readonly: true });
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name LIKE 'rate_limits%'").pluck().all()).toEqual([
      expect.stringMatching(/WITHOUT ROWID$/),
    ]);
    db.close();
  });

  /** The committed count of `key` under rule `r` in `dir`'s limits.db, read by another connection. */
  function committed(dir: string, r: { name: string }, key: string): number | undefined {
    const reader = openSqliteFile(join(dir, "limits.db"), { readonly: true });
    try {
      return (
        reader.prepare("SELECT points FROM rate_limits WHERE key = ?").get(`${r.name}:${key}`) as
          | { points: number }
          | undefined
      )?.points;
    } finally {
      reader.close();
    }
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it("a key far from its limit spends from a committed lease: later turns commit nothing until it is used up", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    try {
      const r = rule(100_000);
      const size = leaseSize(r);
      expect(size).toBeGreaterThan(1);
      expect(await one.consume(r, "ip")).toMatchObject({ allowed: true, remaining: 99_999 });
      // Claimed before anything is spent from it: the decision's point and the whole lease.
      expect(committed(dir, r, "ip")).toBe(1 + size);
      const left: number[] = [];
      for (let i = 0; i < size; i++) {
        left.push((await one.consume(r, "ip")).remaining);
        await nextTurn();
      }
      expect(left).toEqual(Array.from({ length: size }, (_, i) => 99_998 - i));
      expect(committed(dir, r, "ip")).toBe(1 + size);
      // Used up: the next decision commits again (and claims the next lease).
      expect((await one.consume(r, "ip")).remaining).toBe(99_998 - size);
      expect(committed(dir, r, "ip")).toBe(2 + 2 * size);
    } finally {
      await one.close();
    }
  });

  it("with leases a burst gets exactly the limit, and close() gives back what is left (a restart keeps the exact count)", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const r = rule(1_000);
    const decisions = [];
    for (let turn = 0; turn < 30; turn++) {
      decisions.push(...(await Promise.all(Array.from({ length: 50 }, () => one.consume(r, "ip")))));
    }
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(1_000);
    expect(new Set(allowed.map((d) => d.remaining)).size).toBe(1_000);
    await one.close();
    // Refused spends count too (1,500 in all); nothing of a lease is left counted.
    expect(committed(dir, r, "ip")).toBe(1_500);

    const lent = rule(1_000);
    const before = new SqliteRateLimiter(dir);
    for (let i = 0; i < 10; i++) await before.consume(lent, "ip");
    expect(committed(dir, lent, "ip")).toBeGreaterThan(10);
    await before.close();
    expect(committed(dir, lent, "ip")).toBe(10);
    const after = new SqliteRateLimiter(dir);
    expect((await after.consume(lent, "ip")).remaining).toBe(989);
    await after.close();
  });

  it("a lease that ends gives back what is left without another decision", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    try {
      const r = rule(100_000);
      await one.consume(r, "ip");
      await one.consume(r, "ip");
      expect(committed(dir, r, "ip")).toBe(1 + leaseSize(r));
      // Back once the lease has ended (LEASE_MS), whether or not the key is asked for again.
      await waitUntil(async () => committed(dir, r, "ip") === 2);
    } finally {
      await one.close();
    }
  });

  it("two workers with leases: a refusal waits for the other's live lease to come back, so the limit is exact", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const two = new SqliteRateLimiter(dir);
    try {
      const r = rule(128);
      expect(leaseSize(r)).toBe(2);
      // `one` claims a lease of 2 it will not use; `two` spends the rest of the budget.
      expect((await one.consume(r, "ip")).allowed).toBe(true);
      const byTwo = [];
      for (let i = 0; i < 130; i++) byTwo.push(await two.consume(r, "ip"));
      // 127 left after one's call: all of them, though one's lease held 2 of them at the time.
      expect(byTwo.filter((d) => d.allowed)).toHaveLength(127);
      expect(byTwo.slice(127).every((d) => !d.allowed)).toBe(true);

      const burst = rule(1_000);
      const results = [];
      for (let turn = 0; turn < 32; turn++) {
        results.push(
          ...(await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? one : two).consume(burst, "ip")))),
        );
      }
      expect(results.filter((d) => d.allowed)).toHaveLength(1_000);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("a commit never checkpoints the WAL on the calling thread; a thread of its own does, soon after", async () => {
    const dir = tempDir();
    const one = new SqliteRateLimiter(dir);
    const size = () => statSync(join(dir, "limits.db")).size;
    try {
      const before = size();
      // One commit of ~6 MB of WAL, past SQLite's automatic checkpoint (1,000 pages, 4 MB), which
      // would copy it into limits.db (and fsync both files) inside the commit, on the event loop.
      const r = rule(1);
      const long = "x".repeat(200);
      await Promise.all(Array.from({ length: 25_000 }, (_, i) => one.consume(r, `${long}${i}`)));
      expect(size()).toBe(before);
      // The checkpointing thread folds it in within CHECKPOINT_AFTER_MS.
      await waitUntil(async () => size() > 4_000_000);
    } finally {
      await one.close();
    }
  });

  it("a count outlives the limiter that kept it (a restart)", async () => {
    const dir = tempDir();
    const r = rule(5);
    const before = new SqliteRateLimiter(dir);
    for (let i = 0; i < 3; i++) await before.consume(r, "ip");
    await before.close();
    const after = new SqliteRateLimiter(dir);
    expect((await after.consume(r, "ip")).remaining).toBe(1);
    await after.close();
  });
});

describe.skipIf(!REDIS_URL)(`Redis limiter on the shared Redis ${skipReason({ redis: true }) ?? ""}`, () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const c of clients) await c.quit();
  });

  it("a fresh client can be awaited until ready, so a new process counts in Redis from its first request", async () => {
    const c = createRedis({ REDIS_URL }, logger);
    clients.push(c);
    expect(c.status).not.toBe("ready");
    expect(await untilReady(c, 2000)).toBe(true);
    expect(c.status).toBe("ready");
    const metrics = new Metrics();
    expect((await new RedisRateLimiter(c, metrics).consume(rule(3), "first")).remaining).toBe(2);
    expect((await metrics.render()).body).not.toMatch(/rate_limiter_fallback_total\{[^}]*\} [1-9]/);
  });

  it("waiting for an unreachable Redis gives up after the bound instead of blocking the start", async () => {
    const c = createRedis({ REDIS_URL: "redis://127.0.0.1:1" }, logger);
    const started = Date.now();
    expect(await untilReady(c, 300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    c.disconnect();
  });

  it("two limiter instances (two app instances) share one count", async () => {
    const metrics = new Metrics();
    const a = createRedis({ REDIS_URL }, logger);
    const b = createRedis({ REDIS_URL }, logger);
    clients.push(a, b);
    await waitUntil(async () => a.status === "ready" && b.status === "ready");
    const one = new RedisRateLimiter(a, metrics);
    const two = new RedisRateLimiter(b, metrics);
    const r = rule(10);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => (i % 2 ? one : two).consume(r, "203.0.113.9")),
    );
    expect(results.filter((d) => d.allowed)).toHaveLength(10);
    expect((await metrics.render()).body).not.toMatch(/rate_limiter_fallback_total\{[^}]*\} [1-9]/);
  });

  /** A ready client whose commands are recorded (by name) from now on. */
  async function watchedClient() {
    const c = createRedis({ REDIS_URL }, logger);
    clients.push(c);
    expect(await untilReady(c, 2000)).toBe(true);
    const limiter = new RedisRateLimiter(c, new Metrics());
    // The script is loaded into Redis first, so the spends below are one EVALSHA (no NOSCRIPT retry).
    await limiter.consume(rule(1), "warm-up");
    const sent = vi.spyOn(c, "sendCommand");
    return { limiter, names: () => sent.mock.calls.map(([cmd]) => cmd.name) };
  }

  it("the spends asked for during one turn go to Redis as one command, each counted exactly and in order", async () => {
    const { limiter, names } = await watchedClient();
    const r = rule(15);
    const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(r, "burst")));
    expect(names()).toEqual(["evalsha"]);
    expect(decisions.map((d) => d.remaining)).toEqual([
      14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0,
    ]);
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(15).fill(true), ...Array(5).fill(false)]);
    for (const d of decisions) expect(d.resetMs).toBeGreaterThan(55_000);
    // The next turn's spend is a command of its own, on the same count.
    expect((await limiter.consume(r, "burst")).allowed).toBe(false);
    expect(names()).toEqual(["evalsha", "evalsha"]);
  });

  it("refunds and reads (0 points) of a turn ride in its command, in the order they were asked", async () => {
    const { limiter, names } = await watchedClient();
    const [r, other] = [rule(5), rule(10)];
    const [first, second, , read, elsewhere, unseen] = await Promise.all([
      limiter.consume(r, "k"),
      limiter.consume(r, "k"),
      limiter.refund(r, "k"),
      limiter.consume(r, "k", 0),
      limiter.consume(other, "k", 3),
      limiter.consume(r, "never-spent", 0),
    ]);
    expect(names()).toEqual(["evalsha"]);
    expect([first.remaining, second.remaining, read.remaining, elsewhere.remaining]).toEqual([4, 3, 4, 7]);
    expect(unseen).toMatchObject({ allowed: true, remaining: 5, resetMs: 60_000 });
    // A reset is its own command, after the turn's spends: the key starts afresh.
    await Promise.all([limiter.consume(r, "k"), limiter.reset(r, "k")]);
    expect((await limiter.consume(r, "k")).remaining).toBe(4);
  });

  it("counts on rate-limiter-flexible's keys with its step: an old instance and a new one share a window (rolling deploy)", async () => {
    const { limiter } = await watchedClient();
    const c = clients.at(-1) as Redis;
    const r = rule(6);
    const old = new RateLimiterRedis({
      storeClient: c,
      keyPrefix: `almanac:rl:${r.name}`,
      points: r.points,
      duration: r.durationSec,
    });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      seen.push((await limiter.consume(r, "ip")).remaining);
      seen.push((await old.consume("ip")).remainingPoints);
    }
    expect(seen).toEqual([5, 4, 3, 2, 1, 0]);
    expect(await limiter.consume(r, "ip")).toMatchObject({ allowed: false, remaining: 0 });
    await expect(old.consume("ip")).rejects.toMatchObject({ consumedPoints: 8 });
    expect(await c.pttl(`almanac:rl:${r.name}:ip`)).toBeGreaterThan(55_000);
  });
});

describe.skipIf(!hasRedisServer)(
  `Redis limiter when Redis goes away (private redis-server)${skippedBecause(!hasRedisServer, "redis-server is not installed")}`,
  () => {
    let redisServer: PrivateRedis;
    let client: Redis;
    afterAll(async () => {
      client?.disconnect();
      await redisServer?.stop();
    });

    it("keeps deciding under local limits while Redis is stopped or paused, and recovers", async () => {
      redisServer = await PrivateRedis.start();
      client = createRedis({ REDIS_URL: redisServer.url }, logger);
      await waitUntil(async () => client.status === "ready");
      const metrics = new Metrics();
      const limiter = new RedisRateLimiter(client, metrics);
      const r = rule(5);

      expect((await limiter.consume(r, "k")).remaining).toBe(4);
      expect(await limiter.ready()).toBe(true);

      await redisServer.stop();
      const whileDown = [];
      for (let i = 0; i < 7; i++) whileDown.push(await limiter.consume(r, "k"));
      // Local limits apply: 5 allowed by the in-process counter, then refusals.
      expect(whileDown.filter((d) => d.allowed)).toHaveLength(5);
      expect(await limiter.ready()).toBe(false);
      expect((await metrics.render()).body).toMatch(
        new RegExp(`rate_limiter_fallback_total\\{limiter="${r.name}"\\} 7`),
      );

      await redisServer.start();
      await waitUntil(async () => client.status === "ready", 10_000);
      expect(await limiter.ready()).toBe(true);
      // Shared counting resumes: the fresh server has no count for this key yet.
      expect((await limiter.consume(r, "k")).remaining).toBe(4);

      redisServer.pause();
      const started = Date.now();
      // One turn's spends, one command: when it times out, each spend falls back on its own.
      const paused = await Promise.all(Array.from({ length: 7 }, () => limiter.consume(r, "k2")));
      expect(paused.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
      expect(Date.now() - started).toBeLessThan(5000); // answered by the fallback, not stuck on Redis
      expect((await metrics.render()).body).toMatch(
        new RegExp(`rate_limiter_fallback_total\\{limiter="${r.name}"\\} 14`),
      );
      redisServer.resume();
    }, 30_000);
  },
);
