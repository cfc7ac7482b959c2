import { connect, type Socket } from "node:net";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { cpuMs } from "./procs.js";

export interface Target {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  /**
   * Paced runs: p99 of the load generator's own event-loop delay (ms). When it approaches the
   * server's p99, the figure measures the client, not the server.
   */
  clientLagP99?: number;
  /** measure(): the p99 of every half-load run, in order (the row shows their median). */
  p99Runs?: number[];
  /**
   * With the server's pid: CPU time (user + system) the server spent per completed request during
   * the run, in µs, and that time as a share of the run's wall clock (1 = one core busy
   * throughout). Steadier than req/s on a shared host: a neighbour's burst takes the server's
   * wall clock, not its CPU time per request.
   */
  cpuUsPerRequest?: number;
  cpuShare?: number;
}

export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** Seconds at the paced rate before the half-load measurement (see measure()). */
export const SETTLE = Number(process.env.BENCH_SETTLE ?? 5);
/** Half-load runs per row and seconds per run; the row reports the run with the median p99. */
export const HALF_RUNS = Number(process.env.BENCH_HALF_RUNS ?? 3);
export const HALF_DURATION = Number(process.env.BENCH_HALF_DURATION ?? 5);

async function cannon(target: Target, duration: number): Promise<LoadResult> {
  const r = await autocannon({
    url: target.url,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    duration,
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
  };
}

/** A full-rate autocannon run, with the server's CPU time per request when its pid is given. */
async function saturate(target: Target, pid: number | undefined): Promise<LoadResult> {
  const cpu0 = pid === undefined ? Number.NaN : cpuMs(pid);
  const t0 = performance.now();
  const r = await cannon(target, DURATION);
  if (pid === undefined) return r;
  const cpu = cpuMs(pid) - cpu0;
  return { ...r, cpuUsPerRequest: (cpu * 1000) / r.total, cpuShare: cpu / (performance.now() - t0) };
}

/** Warm-up, then the maximum rate (autocannon), then half of it, paced evenly (for p99 at half load). */
export async function measure(
  target: Target,
  pid?: number,
  /** Called after the settle pass; the function it returns, after the last half-load run. */
  aroundHalfRuns?: () => Promise<() => Promise<void>>,
): Promise<{ max: LoadResult; half: LoadResult }> {
  await cannon(target, WARMUP);
  const max = await saturate(target, pid);
  const rate = Math.max(1, Math.round(max.rps / 2));
  // Settle at the paced rate first: straight after saturation the server is still draining its
  // backlog and re-tiering compiled code, and the first seconds measured 10–50× the steady p99.
  await paced(target, rate, SETTLE);
  // Several short runs, reported by their median p99 (and all of them in the notes): on a shared
  // VM a single stall of the host lands in any one run — the yardstick's own p99 at half load
  // read 2 ms in one run and 24 ms in the next — and the median keeps one such stall from
  // deciding the figure. Each run's p99 is still a true p99 from scheduled send to response.
  const done = await aroundHalfRuns?.();
  const runs: LoadResult[] = [];
  for (let i = 0; i < HALF_RUNS; i++) runs.push(await paced(target, rate, HALF_DURATION));
  await done?.();
  const sorted = [...runs].sort((a, b) => a.p99 - b.p99);
  const half = { ...(sorted[Math.floor(sorted.length / 2)] as LoadResult), p99Runs: runs.map((r) => r.p99) };
  return { max, half };
}

/** One measured run at full rate, after the warm-up (no half-load pass). */
export async function measureMax(target: Target, pid?: number): Promise<LoadResult> {
  await cannon(target, WARMUP);
  return saturate(target, pid);
}

/**
 * Open-loop load at a steady `rate` (req/s) for `duration` s over CONNECTIONS keep-alive sockets,
 * latency in microseconds from each request's scheduled time (so a stalled server cannot hide
 * its backlog). autocannon's overallRate is no use for "p99 at half load": it fires each second's
 * quota back to back and then idles, so every second starts at full saturation, and it records
 * whole milliseconds. A raw socket client keeps the load generator's own cost low.
 */
export async function paced(target: Target, rate: number, duration: number): Promise<LoadResult> {
  const url = new URL(target.url);
  const head = [
    `${target.method ?? "GET"} ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(target.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    ...(target.body === undefined ? [] : [`Content-Length: ${Buffer.byteLength(target.body)}`]),
  ].join("\r\n");
  const wire = Buffer.from(`${head}\r\n\r\n${target.body ?? ""}`);
  const latencies: number[] = [];
  const queue: number[] = [];
  const idle: Conn[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;

  interface Conn {
    socket: Socket;
    buf: Buffer;
    since: number;
  }
  const dispatch = () => {
    while (queue.length && idle.length) {
      const c = idle.pop() as Conn;
      c.since = queue.shift() as number;
      c.socket.write(wire);
    }
  };
  const onData = (c: Conn, chunk: Buffer) => {
    c.buf = c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk;
    for (;;) {
      const end = c.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const headText = c.buf.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headText)?.[1] ?? 0);
      if (c.buf.length < end + 4 + length) return;
      c.buf = c.buf.subarray(end + 4 + length);
      latencies.push(performance.now() - c.since);
      const status = Number(headText.slice(9, 12));
      if (status < 200 || status > 299) non2xx++;
      idle.push(c);
      dispatch();
    }
  };
  const conns = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<Conn>((resolve) => {
          const c: Conn = { socket: connect(Number(url.port), url.hostname), buf: Buffer.alloc(0), since: 0 };
          c.socket.setNoDelay(true);
          c.socket.on("data", (d: Buffer) => onData(c, d));
          c.socket.on("error", () => errors++);
          c.socket.once("connect", () => resolve(c));
        }),
    ),
  );
  idle.push(...conns);
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const start = performance.now();
  // Sub-millisecond pacing: a setImmediate loop (the load generator has a core of its own), so
  // each request leaves within microseconds of its scheduled time instead of waiting for the
  // next ≥1 ms timer tick — that wait alone put ~1 ms on the yardstick's p50.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = (performance.now() - start) / 1000;
      if (elapsed >= duration) {
        resolve();
        return;
      }
      for (const due = Math.floor(elapsed * rate); sent < due; sent++) queue.push(start + (sent / rate) * 1000);
      dispatch();
      setImmediate(tick);
    };
    tick();
  });
  // Let the last requests finish (bounded), then close.
  const deadline = performance.now() + 5000;
  while ((queue.length || idle.length < conns.length) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  lag.disable();
  for (const c of conns) c.socket.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN) * 100) / 100;
  return {
    rps: latencies.length / duration,
    p50: pct(0.5),
    p99: pct(0.99),
    non2xx,
    errors,
    total: sent,
    clientLagP99: Math.round(lag.percentile(99) / 1e4) / 100,
  };
}
