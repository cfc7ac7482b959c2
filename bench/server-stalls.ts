/**
 * The server's own stalls over a stretch of a run, from its Prometheus metrics (prom-client's
 * default ones): the event loop's delay, sampled every 10 ms and reset at each scrape, and the
 * garbage collector's pauses (a histogram by kind). Read around the half-load runs, they tell a
 * tail the server made (a long GC pause, a blocked loop) from one the host made (the yardstick's
 * own p99 moves just as much).
 */

export interface Stalls {
  /** Worst and 99th-percentile delay of a 10 ms timer beyond its 10 ms, in ms. */
  loopMaxMs: number;
  loopP99Ms: number;
  /** GC pauses in the stretch: all, those ≥ 1 ms and ≥ 10 ms, and their total time in ms. */
  gcPauses: number;
  gcOver1ms: number;
  gcOver10ms: number;
  gcTotalMs: number;
}

/** Timer resolution of prom-client's event-loop monitor (its reported delays include it). */
const LOOP_RESOLUTION_S = 0.01;

interface Scrape {
  loopMax: number;
  loopP99: number;
  /** Summed over GC kinds: pause count at or under each bucket bound, total count and sum (s). */
  le: Map<string, number>;
  count: number;
  sum: number;
}

function parse(text: string): Scrape {
  const s: Scrape = { loopMax: Number.NaN, loopP99: Number.NaN, le: new Map(), count: 0, sum: 0 };
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || !line) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.startsWith("nodejs_eventloop_lag_max_seconds")) s.loopMax = value;
    else if (line.startsWith("nodejs_eventloop_lag_p99_seconds")) s.loopP99 = value;
    else if (line.startsWith("nodejs_gc_duration_seconds_bucket")) {
      const le = /le="([^"]+)"/.exec(line)?.[1] ?? "";
      s.le.set(le, (s.le.get(le) ?? 0) + value);
    } else if (line.startsWith("nodejs_gc_duration_seconds_count")) s.count += value;
    else if (line.startsWith("nodejs_gc_duration_seconds_sum")) s.sum += value;
  }
  return s;
}

async function scrape(baseUrl: string): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (!res.ok) throw new Error(`/metrics: ${res.status}`);
  return parse(await res.text());
}

/** Starts a stretch (the scrape resets the loop monitor); the returned function ends it. */
async function watchStalls(baseUrl: string): Promise<() => Promise<Stalls>> {
  const start = await scrape(baseUrl);
  return async () => {
    const end = await scrape(baseUrl);
    const over = (le: string) => end.count - start.count - ((end.le.get(le) ?? 0) - (start.le.get(le) ?? 0));
    const ms = (s: number) => Math.max(0, Math.round((s - LOOP_RESOLUTION_S) * 1e5) / 100);
    return {
      loopMaxMs: ms(end.loopMax),
      loopP99Ms: ms(end.loopP99),
      gcPauses: end.count - start.count,
      gcOver1ms: over("0.001"),
      gcOver10ms: over("0.01"),
      gcTotalMs: Math.round((end.sum - start.sum) * 1e5) / 100,
    };
  };
}

function describeStalls(s: Stalls): string {
  return (
    `server's own loop delay during the ½-max runs: p99 ${s.loopP99Ms} ms, max ${s.loopMaxMs} ms; ` +
    `GC: ${s.gcPauses} pauses, ${s.gcOver1ms} ≥ 1 ms, ${s.gcOver10ms} ≥ 10 ms, ${s.gcTotalMs} ms in all`
  );
}

/** For measure(): watches the server at `baseUrl` around the half-load runs; `note()` describes it. */
export function stallWatch(baseUrl: string): { around: () => Promise<() => Promise<void>>; note: () => string[] } {
  let stalls: Stalls | undefined;
  return {
    around: async () => {
      const end = await watchStalls(baseUrl);
      return async () => {
        stalls = await end();
      };
    },
    note: () => (stalls ? [describeStalls(stalls)] : []),
  };
}
