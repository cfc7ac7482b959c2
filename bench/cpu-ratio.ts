/**
 * CPU per request of one Almanac GET against the yardstick's, interleaved: the two servers run
 * side by side and take turns, `ROUNDS` times, each turn a fixed number of requests (autocannon,
 * 50 connections) with the server's user + system CPU time read from /proc before and after. The
 * ratio of each pair (yardstick's CPU per request over Almanac's) is printed, then the median:
 * the "× yardstick by CPU" of `npm run bench`, steadier on a shared host because the two sides of
 * a pair meet the same background load. `node --import tsx bench/cpu-ratio.ts [path]`; the
 * default path is the bench's moon row with the answer cache off (ANSWER_CACHE_MB=0, every call
 * through the app). RATIO_ROUNDS (7), RATIO_REQUESTS (20000), RATIO_ENV (extra server
 * environment as NAME=VALUE,…; default ANSWER_CACHE_MB=0), RATIO_CPU_PROF (a directory: the
 * server writes a V8 CPU profile there when it exits; bench/profile-top.ts summarises it),
 * RATIO_BASE (another checkout, e.g. an export of main with node_modules linked: its Almanac, built
 * here first, takes a turn after this one's in every round, so a change is measured before and
 * after against the same yardstick turns).
 */
import autocannon from "autocannon";
import { cpuMs } from "./procs.js";
import { stallWatch } from "./server-stalls.js";
import { buildBundle, envList, type Server, startAlmanac, startYardstick } from "./servers.js";

const PATH = process.argv[2] ?? "/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12";
const ROUNDS = Number(process.env.RATIO_ROUNDS ?? 7);
const REQUESTS = Number(process.env.RATIO_REQUESTS ?? 20_000);
const ENV = envList(process.env.RATIO_ENV ?? "ANSWER_CACHE_MB=0");

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2000, 0, 1);
/** Distinct dates a `{date}` in the path cycles through: more than any answer cache keeps. */
const DATES = 20_000;

/** Requests sent with a `{date}` so far: each round goes on from the day the one before stopped at. */
let n = 0;

/**
 * The server's CPU µs per request over `amount` requests to `url`. A `{date}` in `url` becomes a
 * new date on each request (2000-01-01 onwards, on across rounds), so no answer kept for a query
 * is asked again within DATES requests: the cost of computing the answer, not of finding it.
 */

async function cpuPerRequest(server: Server, url: string, amount: number): Promise<number> {
  const pid = server.child.pid;
  const cpu0 = cpuMs(pid);
  const { pathname, search } = new URL(url.replace("{date}", "DATE"));
  const path = `${pathname}${search}`;
  const rotate = url.includes("{date}")
    ? {
        requests: [
          {
            setupRequest: (req: { path?: string }) => {
              const day = new Date(FIRST_DAY + (n++ % DATES) * DAY_MS).toISOString().slice(0, 10);
              return { ...req, path: path.replace("DATE", day) };
            },
          },
        ],
      }
    : {};
  const r = await autocannon({ url, connections: 50, amount, ...rotate });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return ((cpuMs(pid) - cpu0) * 1000) / r.requests.total;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const BASE = process.env.RATIO_BASE;

buildBundle();
if (BASE) buildBundle(BASE);
const yard = await startYardstick();
const almanac = await startAlmanac({ env: ENV, cpuProfDir: process.env.RATIO_CPU_PROF });
const base = BASE ? await startAlmanac({ env: ENV, root: BASE }) : undefined;
try {
  const sides = [{ name: "almanac", server: almanac }, ...(base ? [{ name: "base", server: base }] : [])].map((s) => ({
    ...s,
    target: `${s.server.url}${PATH}`,
    ratios: [] as number[],
    cpu: [] as number[],
  }));
  // Warm-up: JIT and caches on every server.
  await cpuPerRequest(yard, `${yard.url}/`, REQUESTS);
  for (const s of sides) await cpuPerRequest(s.server, s.target, REQUESTS);
  // The server's GC pauses and loop delay over its rounds (scraped from its /metrics).
  const stalls = stallWatch(almanac.url);
  const ends: (() => Promise<void>)[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const y = await cpuPerRequest(yard, `${yard.url}/`, REQUESTS);
    if (i === 0) ends.push(await stalls.around());
    const line = [`round ${i + 1}: yardstick ${y.toFixed(1)} µs`];
    for (const s of sides) {
      const a = await cpuPerRequest(s.server, s.target, REQUESTS);
      s.ratios.push(y / a);
      s.cpu.push(a);
      line.push(`${s.name} ${a.toFixed(1)} µs, ratio ${(y / a).toFixed(3)}`);
    }
    console.log(line.join(", "));
  }
  for (const end of ends) await end();
  const note = stalls.note().join("").replace("during the ½-max runs", "during its rounds");
  console.log(`${note} (${ROUNDS * REQUESTS} requests)`);
  const env = Object.entries(ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  for (const s of sides)
    console.log(
      `GET ${PATH} (${env})${s.name === "base" ? ` on ${BASE}` : ""}: median ${median(s.cpu).toFixed(1)} µs of CPU per request, ` +
        `median ratio ${median(s.ratios).toFixed(3)} × yardstick by CPU (${ROUNDS} interleaved rounds of ${REQUESTS})`,
    );
} finally {
  await base?.close();
  await almanac.close();
  await yard.close();
}
