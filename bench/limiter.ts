import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { SqliteRateLimiter } from "../src/adapters/limiter.js";
import { MEMORY_LIMITER_MAX_KEYS, MemoryRateLimiter } from "../src/adapters/memory-limiter.js";

/**
 * The embedded limiter's CPU per decision (DATA_DIR/limits.db) by how many decisions one turn of
 * the event loop asks for (a loaded server asks for many: its group commit pays one commit per
 * turn). `node --import tsx bench/limiter.ts`; best of 7 rounds of ~4,000 decisions each, for a
 * spend (1 point) and a look (0 points: the invalid-key check of a known key).
 *
 * Then the in-process limiter (the fallback while Redis is unreachable): heap growth
 * for 100,000 and 1,000,000 distinct clients of the hour-long demo rule, and CPU per decision for
 * a new client and a repeat one, against rate-limiter-flexible's RateLimiterMemory it replaced.
 */
const rule = { name: "demo", points: 1_000_000_000, durationSec: 3600 };

async function round(limiter: SqliteRateLimiter, perTurn: number, points: number): Promise<number> {
  const turns = Math.ceil(4000 / perTurn);
  const cpu0 = process.cpuUsage();
  for (let t = 0; t < turns; t++) {
    const decisions = Array.from({ length: perTurn }, (_, i) => limiter.consume(rule, `203.0.113.${i % 50}`, points));
    await Promise.all(decisions);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (turns * perTurn);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "almanac-limiter-"));
  const limiter = new SqliteRateLimiter(dir);
  try {
    for (const points of [1, 0]) {
      for (const perTurn of [1, 5, 20, 50]) {
        let best = Number.POSITIVE_INFINITY;
        for (let r = 0; r < 7; r++) best = Math.min(best, await round(limiter, perTurn, points));
        console.log(
          `${points} point(s), ${String(perTurn).padStart(2)} decisions per turn: ${best.toFixed(1)} µs CPU each`,
        );
      }
    }
  } finally {
    await limiter.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};

type Spend = (key: string) => Promise<unknown>;

/** Heap growth and CPU per decision for `n` distinct clients, then for `n` decisions of one client. */
async function flood(make: () => Spend, n: number) {
  const demo = make();
  const before = heapMb();
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await demo(`2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`);
  let cpu = process.cpuUsage(cpu0);
  const grew = heapMb() - before;
  const newUs = (cpu.user + cpu.system) / n;
  cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await demo("192.0.2.1");
  cpu = process.cpuUsage(cpu0);
  return { grew, newUs, repeatUs: (cpu.user + cpu.system) / n };
}

async function inProcess() {
  const demo = { name: "demo", points: 60, durationSec: 3600 };
  const makers: [string, () => Spend][] = [
    [
      "RateLimiterMemory (before)",
      () => {
        const l = new RateLimiterMemory({ keyPrefix: "demo", points: 60, duration: 3600 });
        return (key) => l.consume(key).catch(() => undefined);
      },
    ],
    [
      `MemoryRateLimiter (bounded at ${MEMORY_LIMITER_MAX_KEYS.toLocaleString("en")} keys)`,
      () => {
        const l = new MemoryRateLimiter();
        return (key) => l.consume(demo, key);
      },
    ],
    [
      "SqliteRateLimiter (limits.db, one decision per turn)",
      () => {
        const l = new SqliteRateLimiter(mkdtempSync(join(tmpdir(), "almanac-limiter-")));
        return (key) => l.consume(demo, key);
      },
    ],
  ];
  console.log("\n| limiter | distinct clients | heap growth | CPU per new client | CPU per repeat client |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const n of [100_000, 1_000_000]) {
    for (const [name, make] of n > 100_000 ? makers.slice(0, 2) : makers) {
      const r = await flood(make, n);
      console.log(
        `| ${name} | ${n.toLocaleString("en")} | ${r.grew.toFixed(1)} MB | ${r.newUs.toFixed(2)} µs | ${r.repeatUs.toFixed(2)} µs |`,
      );
      gc();
    }
  }
}

await main();
await inProcess();
// RateLimiterMemory's timers would keep the process alive for the window.
process.exit(0);
