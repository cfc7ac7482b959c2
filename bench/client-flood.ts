/**
 * `npm run bench:clients`: what 100,000 distinct clients cost the server. Almanac on its
 * embedded defaults behind one trusted proxy hop (TRUST_PROXY=1) answers N counted demo-tier GETs,
 * first all from one client, then each from a client of its own (distinct IPv4 addresses, then
 * distinct IPv6 /64s). Reported: the server's RSS growth over each phase and its CPU time per
 * request, so the limiter decision for a new client can be compared with a repeat client's.
 * Twice: on the embedded limiter, and with Redis unreachable (the in-process fallback decides).
 * After each phase, where that memory is: the V8 heap (used and reserved) and memory outside it
 * (Buffers, native addons such as SQLite's page cache are not in it), from the server's /metrics.
 * A measurement, never a pass/fail test. BENCH_CLIENTS sets N (default 100000); BENCH_LIMITERS
 * (`embedded,fallback`, the default) which limiters run.
 */
import http from "node:http";
import { cpuMs, rssMb } from "./procs.js";
import { buildBundle, startAlmanac } from "./servers.js";

const N = Number(process.env.BENCH_CLIENTS ?? 100_000);
const CONCURRENCY = 64;
const PATH = "/v1/moon?date=2024-01-25";
const LIMITERS = (process.env.BENCH_LIMITERS ?? "embedded,fallback").split(",");

/** The server's heap (used / reserved) and external memory in MB, from prom-client's default metrics. */
async function memoryOf(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const mb = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]) / 2 ** 20;
  const heap = `${mb("nodejs_heap_size_used_bytes").toFixed(0)} / ${mb("nodejs_heap_size_total_bytes").toFixed(0)}`;
  return `${heap} MB | ${mb("nodejs_external_memory_bytes").toFixed(0)} MB`;
}

const v4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const v6 = (i: number) => `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`;

async function flood(url: string, clientOf: (i: number) => string): Promise<Record<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.get(`${url}${PATH}`, { agent, headers: { "X-Forwarded-For": clientOf(i) } }, (res) => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) await one(next++);
    }),
  );
  agent.destroy();
  return statuses;
}

/** Runs the three phases against one server configuration; returns its table rows. */
async function measure(label: string, env: Record<string, string>): Promise<string[]> {
  const server = await startAlmanac({ env: { TRUST_PROXY: "1", ...env } });
  const pid = server.child.pid;
  const rows: string[] = [];
  try {
    await flood(server.url, () => "192.0.2.1"); // warm-up: JIT, caches, the answer cache
    const phases: [string, (i: number) => string][] = [
      ["one client", () => "192.0.2.2"],
      ["distinct IPv4 clients", v4],
      ["distinct IPv6 /64s", v6],
      // The same number again, none seen before: the server's memory must stay flat.
      ["another distinct IPv4 clients", (i) => v4(i + N)],
    ];
    for (const [name, clientOf] of phases) {
      const rss0 = rssMb(pid);
      const cpu0 = cpuMs(pid);
      const statuses = await flood(server.url, clientOf);
      const cpuUs = ((cpuMs(pid) - cpu0) * 1000) / N;
      const rss = rssMb(pid);
      rows.push(
        `| ${label} | ${name} | ${N.toLocaleString("en")} | ${(rss - rss0).toFixed(1)} MB | ${rss.toFixed(0)} MB | ${await memoryOf(server.url)} | ${cpuUs.toFixed(0)} µs | ${JSON.stringify(statuses)} |`,
      );
    }
  } finally {
    await server.close();
  }
  return rows;
}

buildBundle();
const rows = [
  ...(LIMITERS.includes("embedded") ? await measure("embedded (limits.db)", {}) : []),
  // Nothing listens on port 1: every decision is the in-process fallback's (bounded).
  ...(LIMITERS.includes("fallback")
    ? await measure("Redis unreachable (in-process fallback)", { REDIS_URL: "redis://127.0.0.1:1" })
    : []),
];
console.log(`Node ${process.version}, TRUST_PROXY=1, ${CONCURRENCY} connections\n`);
console.log(
  "| limiter | clients | requests | server RSS growth | server RSS after | heap used / reserved | external | server CPU per request | statuses |",
);
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
for (const row of rows) console.log(row);
