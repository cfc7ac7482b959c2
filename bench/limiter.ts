import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteRateLimiter } from "../src/adapters/limiter.js";

/**
 * The embedded limiter's CPU per decision (DATA_DIR/limits.db) by how many decisions one turn of
 * the event loop asks for (a loaded server asks for many: its group commit pays one commit per
 * turn). `node --import tsx bench/limiter.ts`; best of 7 rounds of ~4,000 decisions each, for a
 * spend (1 point) and a look (0 points: the invalid-key check of a known key).
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

await main();
