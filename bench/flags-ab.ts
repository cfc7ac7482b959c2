/**
 * Node flags A/B by CPU: `node --import tsx bench/flags-ab.ts [path | classify]` starts the yardstick and one
 * Almanac per configuration side by side, then in turns gives the yardstick and each Almanac the
 * same number of requests (autocannon, 50 connections): yardstick, A, yardstick, B, … `ROUNDS`
 * times. Each pair's ratio is the yardstick's CPU per request over Almanac's (as in
 * bench/cpu-ratio.ts), so every configuration meets the same background load; printed per
 * configuration as min / median / max, with the server's RSS after the last round. `classify`:
 * `POST /v1/vibe/classify` with the bench's 20 texts and a key made for each server.
 * FLAGS_AB: `label=flags;label=flags` (flags added after `npm start`'s, a later flag wins; default:
 * `npm start` against Node 20's own young generation and old-generation growth). RATIO_ROUNDS
 * (7), RATIO_REQUESTS (20000), RATIO_ENV (extra server environment as NAME=VALUE,…; default none).
 */
import autocannon from "autocannon";
import { CLASSIFY_TEXTS } from "./fixtures.js";
import { cpuMs, rssMb } from "./procs.js";
import { buildBundle, createKey, envList, type Server, startAlmanac, startYardstick } from "./servers.js";

const PATH = process.argv[2] ?? "/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12";
const ROUNDS = Number(process.env.RATIO_ROUNDS ?? 7);
const REQUESTS = Number(process.env.RATIO_REQUESTS ?? 20_000);
const ENV = envList(process.env.RATIO_ENV ?? "");
const DEFAULT_AB = "npm start=;2 × 16 MB young, dynamic growth=--max-semi-space-size=16 --heap-growing-percent=0";
/** [label, flags] per configuration: each `label=flags` splits at its first `=`. */
const CONFIGS = (process.env.FLAGS_AB ?? DEFAULT_AB)
  .split(";")
  .map((c): [string, string] => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)]);

/** What autocannon sends to each server: a GET of PATH, or a keyed classify call. */
const requests = new Map<Server, autocannon.Options>();

async function cpuPerRequest(server: Server, url: string): Promise<number> {
  const cpu0 = cpuMs(server.child.pid);
  const r = await autocannon({ ...requests.get(server), url, connections: 50, amount: REQUESTS });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return ((cpuMs(server.child.pid) - cpu0) * 1000) / r.requests.total;
}

buildBundle();
const yardstick = await startYardstick();
const servers: Server[] = [];
const before = process.env.BENCH_NODE_FLAGS;
for (const [, flags] of CONFIGS) {
  process.env.BENCH_NODE_FLAGS = `${before ?? ""} ${flags}`;
  const server = await startAlmanac({ env: ENV });
  servers.push(server);
  if (PATH === "classify")
    requests.set(server, {
      url: `${server.url}/v1/vibe/classify`,
      method: "POST",
      headers: {
        authorization: `Bearer ${await createKey(server, "vibe.classify")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ texts: CLASSIFY_TEXTS }),
    });
}
const target = (s: Server) => (PATH === "classify" ? `${s.url}/v1/vibe/classify` : `${s.url}${PATH}`);
const ratios = new Map<Server, number[]>(servers.map((s) => [s, []]));
const rss = new Map<Server, number>();
try {
  for (const s of [yardstick, ...servers])
    await autocannon({
      ...requests.get(s),
      url: s === yardstick ? `${s.url}/` : target(s),
      connections: 50,
      amount: REQUESTS / 2,
    });
  for (let round = 0; round < ROUNDS; round++)
    for (const server of servers) {
      const y = await cpuPerRequest(yardstick, `${yardstick.url}/`);
      ratios.get(server)?.push(y / (await cpuPerRequest(server, target(server))));
    }
  for (const server of servers) rss.set(server, rssMb(server.child.pid));
} finally {
  await yardstick.close();
  for (const server of servers) await server.close();
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
console.log(`${PATH} ${JSON.stringify(ENV)}, ${ROUNDS} rounds of ${REQUESTS} requests\n`);
console.log("| configuration | × yardstick by CPU (min / median / max) | RSS after |");
console.log("| --- | ---: | ---: |");
for (const [i, [label]] of CONFIGS.entries()) {
  const server = servers[i] as Server;
  const r = sorted(ratios.get(server) ?? []);
  const at = (k: number) => (r[k] ?? Number.NaN).toFixed(2);
  console.log(
    `| ${label} | ${at(0)} / ${at(Math.floor(r.length / 2))} / ${at(r.length - 1)} | ${rss.get(server)?.toFixed(0)} MB |`,
  );
}
