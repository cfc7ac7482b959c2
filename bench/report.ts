import { cpus, loadavg } from "node:os";
import { sqliteDriverLabel } from "../src/db/sqlite.js";
import { CLIENT_LATE_LIMIT_MS, HALF_DURATION, HALF_RUNS, keptSchedule, type LoadResult, SETTLE } from "./load.js";

export interface Row {
  route: string;
  max?: LoadResult;
  half?: LoadResult;
  /** The yardstick measured just before this row (background load drifts). */
  yard?: LoadResult;
  /** Multiplies req/s for an extra figure (texts per request for classify). */
  perRequest?: number;
  notes: string[];
}

export interface Check {
  target: string;
  measured: string;
  met: boolean | null;
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en") : "–");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "–");
const ms = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? "–" : `${n} ms`);

/** req/s as a multiple of the yardstick measured just before; with `to`, relative to that row's multiple. */
export function ratio(row: Row | undefined, to?: Row): number {
  const own = (r: Row | undefined) => (r?.max && r.yard ? r.max.rps / r.yard.rps : Number.NaN);
  return to ? own(row) / own(to) : own(row);
}

/**
 * The same multiple from CPU time: the yardstick's server CPU µs per request over the row's. It
 * is what the req/s ratio would be with both servers CPU-bound on one core, and moves far less
 * than req/s when the host's neighbours come and go.
 */
export function cpuRatio(row: Row | undefined): number {
  const own = row?.max?.cpuUsPerRequest;
  const yard = row?.yard?.cpuUsPerRequest;
  return own && yard ? yard / own : Number.NaN;
}

/**
 * The "p99 at ½ max" cell: the median run's p99 when the paced client kept its schedule in that
 * run, else how late the client itself was — a p99 the load generator made is not the server's.
 */
/** Answers other than 2xx in the half-load runs: the server did other work than the row's (e.g. 429s). */
const refused = (half: LoadResult) => (half.non2xxRuns ?? [half.non2xx]).reduce((a, b) => a + b, 0);

export function halfP99(half: LoadResult | undefined): string {
  if (!half) return "–";
  if (refused(half) > 0) return `${refused(half)} non-2xx answers, not measured`;
  if (keptSchedule(half)) return ms(half.p99);
  return `client late (${ms(half.clientLateP99)} p99), not measured`;
}

/** The goal check's "measured" text and verdict for a row's half-load run (null: not measured). */
export function halfCheck(half: LoadResult | undefined, goalMs: number): { measured: string; met: boolean | null } {
  if (!half) return { measured: "skipped", met: null };
  const at = `${half.p99} ms at ${Math.round(half.rps)} req/s`;
  if (refused(half) > 0)
    return { measured: `${refused(half)} answers in the runs were not 2xx: ${at} is not the row's`, met: null };
  if (!keptSchedule(half))
    return {
      measured: `the paced client was ${half.clientLateP99} ms late at p99 (limit ${CLIENT_LATE_LIMIT_MS} ms): its reading, ${at}, is not the server's`,
      met: null,
    };
  return { measured: `${at} (client late ${half.clientLateP99} ms at p99)`, met: half.p99 <= goalMs };
}

export function table(rows: Row[]): string {
  const head =
    "| route | req/s | × yardstick | server CPU per request | × yardstick by CPU | p50 | p99 | p99 at ½ max | notes |\n" +
    "|---|---:|---:|---:|---:|---:|---:|---:|---|";
  const lines = rows.map((r) => {
    const m = r.max;
    const notes = [...r.notes];
    if (m && r.perRequest) notes.unshift(`${f0(m.rps * r.perRequest)} texts/s`);
    if (m?.cpuShare !== undefined) notes.push(`server CPU ${Math.round(m.cpuShare * 100)} % of a core at max`);
    if (m && r.yard && r.yard !== m) {
      notes.push(
        `yardstick just before: ${f0(r.yard.rps)} req/s, ${f0(r.yard.cpuUsPerRequest ?? Number.NaN)} µs CPU each`,
      );
    }
    if (m && m.non2xx + m.errors > 0) notes.push(`${m.non2xx} non-2xx, ${m.errors} errors of ${m.total}`);
    if (r.half?.p99Runs) notes.push(`p99 at ½ max in ${r.half.p99Runs.length} runs: ${r.half.p99Runs.join(", ")} ms`);
    if (r.half?.non2xxRuns?.some((n) => n > 0))
      notes.push(`non-2xx answers in the ½-max runs: ${r.half.non2xxRuns.join(", ")}`);
    if (r.half?.lateRuns)
      notes.push(`the paced client's own lateness p99 in those runs: ${r.half.lateRuns.join(", ")} ms`);
    const cpu = m?.cpuUsPerRequest === undefined ? "–" : `${f0(m.cpuUsPerRequest)} µs`;
    return `| ${r.route} | ${m ? f0(m.rps) : "skipped"} | ${m ? f2(ratio(r)) : "–"} | ${cpu} | ${f2(cpuRatio(r))} | ${ms(m?.p50)} | ${ms(m?.p99)} | ${halfP99(r.half)} | ${notes.join("; ")} |`;
  });
  return [head, ...lines].join("\n");
}

export function checks(list: Check[]): string {
  const head = "| target | measured | |\n|---|---|---|";
  const mark = (m: boolean | null) => (m === null ? "not measured" : m ? "met" : "**missed**");
  return [head, ...list.map((c) => `| ${c.target} | ${c.measured} | ${mark(c.met)} |`)].join("\n");
}

export function machine(pinned: boolean, connections: number, duration: number, warmup: number): string {
  const c = cpus();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- CPU: ${c[0]?.model ?? "unknown"}, ${c.length} cores; load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`,
    // The servers run on this same Node (process.execPath), so on the same SQLite driver.
    `- Node ${process.version}, ${process.platform} ${process.arch}; ${sqliteDriverLabel()}`,
    `- autocannon: ${connections} connections, ${warmup} s warm-up, ${duration} s per measurement; ` +
      (pinned
        ? "servers pinned to core 0, load generator to core 1 (taskset)"
        : "NOT pinned (taskset unavailable): servers and load generator share cores"),
    `- p99 at ½ max: the paced client (bench/load.ts) at half the row's autocannon rate, ${SETTLE} s to settle, ` +
      `then ${HALF_RUNS} runs of ${HALF_DURATION} s; the column shows the median run's p99, counted from each ` +
      `request's scheduled send time, or "client late" when the client's own lateness p99 in that run was over ` +
      `${CLIENT_LATE_LIMIT_MS} ms (then the figure would be the load generator's)`,
  ].join("\n");
}
