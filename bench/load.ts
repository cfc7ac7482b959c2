import { connect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
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
   * Paced runs: p99 of the client's own lateness (ms), from each request's scheduled send time to
   * the moment its loop got round to it. It is part of every latency; above CLIENT_LATE_LIMIT_MS
   * the run measures the load generator, not the server.
   */
  clientLateP99?: number;
  /** measure(): the p99 of every half-load run, in order (the row shows their median). */
  p99Runs?: number[];
  /** measure(): the client's lateness p99 of every half-load run, in the same order. */
  lateRuns?: number[];
  /** measure(): the answers other than 2xx in every half-load run, in the same order. */
  non2xxRuns?: number[];
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
  const half = {
    ...(sorted[Math.floor(sorted.length / 2)] as LoadResult),
    p99Runs: runs.map((r) => r.p99),
    lateRuns: runs.map((r) => r.clientLateP99 ?? Number.NaN),
    non2xxRuns: runs.map((r) => r.non2xx),
  };
  return { max, half };
}

/** One measured run at full rate, after the warm-up (no half-load pass). */
export async function measureMax(target: Target, pid?: number): Promise<LoadResult> {
  await cannon(target, WARMUP);
  return saturate(target, pid);
}

/**
 * The paced client keeps its schedule when the p99 of its own lateness (scheduled send time → the
 * moment its loop got round to the request) is at most this. Above it, the client's lateness is a
 * fifth of the 5 ms goal or more and the run's p99 says more about the load generator than about
 * the server; the report then shows the lateness instead of the p99 (see docs/benchmarks.md,
 * "Ninth session: what p99 at ½ max measures").
 */
export const CLIENT_LATE_LIMIT_MS = 1;

/** Whether a paced run's client kept its schedule (false when it was late or did not say). */
export const keptSchedule = (r: Pick<LoadResult, "clientLateP99"> | undefined): boolean =>
  r?.clientLateP99 !== undefined && r.clientLateP99 <= CLIENT_LATE_LIMIT_MS;

/**
 * The paced client's own address when the server is on 127.0.0.1 (any 127/8 address is the loopback
 * on Linux). Almanac counts the demo tier per client address: warm-up and saturation from
 * 127.0.0.1 spend ~600,000 of the bench's 1,000,000 an hour on the fastest row (the hot lane's
 * moon, 46,000 req/s), and the settle pass and three half-load runs another ~460,000, so from one
 * address the last run ran out and was answered 429 through the app — at about twice the CPU per
 * request, past what the server can do at that rate (p99 507 ms in the third run at 05:39;
 * docs/benchmarks.md, "Tenth session"). From its own address the paced client has its own budget.
 */
export const PACED_FROM = "127.0.0.2";

const CRLFCRLF = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = Buffer.from("\ncontent-length:");

/** The Content-Length of the head in buf[from, end), found without making a string; 0 if none. */
function contentLength(buf: Buffer, from: number, end: number): number {
  for (let line = buf.indexOf(10, from); line >= 0 && line < end; line = buf.indexOf(10, line + 1)) {
    let i = 1;
    // Header names are case-insensitive: compare each letter with its lower-case form (| 0x20).
    while (i < CONTENT_LENGTH.length && ((buf[line + i] ?? 0) | 0x20) === (CONTENT_LENGTH[i] as number)) i++;
    if (i < CONTENT_LENGTH.length) continue;
    let at = line + i;
    while (buf[at] === 0x20) at++;
    let length = 0;
    for (let d = buf[at] ?? 0; d >= 0x30 && d <= 0x39; d = buf[++at] ?? 0) length = length * 10 + d - 0x30;
    return length;
  }
  return 0;
}

/**
 * Consumes the complete HTTP/1.1 responses at the start of `buf` (Content-Length framed), calling
 * `onResponse(status)` for each; returns the bytes left over (a partial response, or empty).
 * Works on the bytes: no string per response, so the client makes little garbage at 30,000 req/s.
 */
export function takeResponses(buf: Buffer, onResponse: (status: number) => void): Buffer {
  let at = 0;
  for (;;) {
    const end = buf.indexOf(CRLFCRLF, at);
    if (end < 0) break;
    const next = end + 4 + contentLength(buf, at, end);
    if (buf.length < next) break;
    onResponse((buf[at + 9] ?? 0) * 100 + (buf[at + 10] ?? 0) * 10 + (buf[at + 11] ?? 0) - 0x30 * 111);
    at = next;
  }
  return at === 0 ? buf : buf.subarray(at);
}

const percentile = (xs: Float64Array, p: number) =>
  xs.length ? Math.round((xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] as number) * 100) / 100 : Number.NaN;

/**
 * Open-loop load at a steady `rate` (req/s) for `duration` s over CONNECTIONS keep-alive sockets.
 * Latency runs from each request's scheduled send time, not from when it was written, so neither
 * a stalled server (requests wait for a free connection) nor a late client can hide a backlog
 * (coordinated omission). The client's own lateness — scheduled time → the moment its loop saw
 * the request due — is measured per request and returned as `clientLateP99`: it is part of every
 * latency, so when it is not small the p99 is the client's. autocannon's overallRate is no use
 * here: each connection sends its quota for the second back to back and then idles (httpClient.js,
 * a counter reset by a 1 s interval), so every second starts at saturation, its latency runs from
 * the actual send, and it records whole milliseconds. A raw socket client keeps its own cost low.
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
  // Preallocated: growing arrays of doubles by push at this rate made garbage and GC pauses in
  // the very loop whose lateness is measured.
  const planned = Math.ceil(rate * duration) + 1;
  const latencies = new Float64Array(planned);
  const late = new Float64Array(planned);
  let done = 0;
  let due = 0; // requests whose scheduled time has passed (and whose lateness is recorded)
  let next = 0; // the next request to send; requests next..due-1 wait for a free connection
  const idle: Conn[] = [];
  let non2xx = 0;
  let errors = 0;
  let start = 0; // set once every connection is open
  const scheduled = (i: number) => start + (i / rate) * 1000;

  interface Conn {
    socket: Socket;
    buf: Buffer;
    since: number;
  }
  const dispatch = () => {
    while (next < due && idle.length) {
      const c = idle.pop() as Conn;
      c.since = scheduled(next++);
      c.socket.write(wire);
    }
  };
  const onData = (c: Conn, chunk: Buffer) => {
    c.buf = takeResponses(c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk, (status) => {
      if (done < planned) latencies[done++] = performance.now() - c.since;
      if (status < 200 || status > 299) non2xx++;
      idle.push(c);
    });
    dispatch();
  };
  const conns = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<Conn>((resolve) => {
          const localAddress = url.hostname === "127.0.0.1" ? PACED_FROM : undefined;
          const socket = connect({ port: Number(url.port), host: url.hostname, localAddress });
          const c: Conn = { socket, buf: Buffer.alloc(0), since: 0 };
          c.socket.setNoDelay(true);
          c.socket.on("data", (d: Buffer) => onData(c, d));
          c.socket.on("error", () => errors++);
          c.socket.once("connect", () => resolve(c));
        }),
    ),
  );
  idle.push(...conns);
  start = performance.now();
  // Sub-millisecond pacing: a setImmediate loop (the load generator has a core of its own), so
  // each request leaves within microseconds of its scheduled time instead of waiting for the
  // next ≥1 ms timer tick — that wait alone put ~1 ms on the yardstick's p50.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const elapsed = (now - start) / 1000;
      if (elapsed >= duration) {
        resolve();
        return;
      }
      for (const upTo = Math.min(planned, Math.floor(elapsed * rate)); due < upTo; due++) {
        late[due] = now - scheduled(due);
      }
      dispatch();
      setImmediate(tick);
    };
    tick();
  });
  // Let the last requests finish (bounded), then close.
  const deadline = performance.now() + 5000;
  while ((next < due || idle.length < conns.length) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  for (const c of conns) c.socket.destroy();
  const lat = latencies.subarray(0, done).sort();
  const lateness = late.subarray(0, due).sort();
  return {
    rps: done / duration,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    non2xx,
    errors,
    total: due,
    clientLateP99: percentile(lateness, 0.99),
  };
}
