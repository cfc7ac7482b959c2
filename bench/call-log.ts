/**
 * Per-call cost of the call log on classify: the same build twice in one run, once with the call
 * log (as served) and once without it, alternated A/B with autocannon, on a key with an owner
 * (whose calls the log records) and no plan (no account rate limit in the way).
 * `node --import tsx bench/call-log.ts` (BENCH_SECONDS, BENCH_PAIRS)
 */
import autocannon from "autocannon";
import pino from "pino";
import { createApp } from "../src/app.js";
import { parseConfig } from "../src/config.js";
import { buildDeps, closeDeps } from "../src/deps.js";
import { startServer } from "../src/server.js";
import { tempDir } from "../test/helpers/env.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);

async function start(logging: boolean) {
  const config = parseConfig({ DATA_DIR: tempDir(), LOG_LEVEL: "silent" });
  const deps = await buildDeps(config, pino({ level: "silent" }));
  const app = createApp({ ...deps, activity: logging ? deps.activity : undefined });
  const server = await startServer(app, deps, { port: 0, host: "127.0.0.1" });
  const { key } = await deps.keys.create({
    name: "bench",
    ownerId: "bench-owner",
    permissions: [config.KEY_PERMISSION],
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    key,
    logged: async () => (await deps.activity?.listCalls("bench-owner", {}, 5))?.length ?? 0,
    close: async () => {
      await server.close();
      await closeDeps(deps);
    },
  };
}

async function run(target: { url: string; key: string }): Promise<number> {
  const result = await autocannon({
    url: `${target.url}/v1/vibe/classify`,
    method: "POST",
    connections: 10,
    duration: SECONDS,
    headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
    body: '["What a lovely day"]',
  });
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers`);
  return result.requests.average;
}

const bare = await start(false);
const logged = await start(true);
const rates: { without: number[]; with_log: number[] } = { without: [], with_log: [] };
for (let i = 0; i < PAIRS; i++) {
  rates.without.push(await run(bare));
  rates.with_log.push(await run(logged));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const a = mean(rates.without);
const b = mean(rates.with_log);
console.log(
  JSON.stringify({
    without_req_per_s: Math.round(a),
    with_call_log_req_per_s: Math.round(b),
    ratio: Number((b / a).toFixed(3)),
    calls_logged: await logged.logged(),
    runs: rates,
  }),
);
await bare.close();
await logged.close();
