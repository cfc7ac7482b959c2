/**
 * Per-call cost of the per-key usage accounting on classify: the same app, twice in one run,
 * once with the counting key store (as served) and once with the bare store, alternated
 * A/B/A/B with autocannon. `node --import tsx bench/usage-accounting.ts`
 */
import autocannon from "autocannon";
import pino from "pino";
import { createKeyStore } from "../src/adapters/keys/factory.js";
import { createApp } from "../src/app.js";
import { parseConfig } from "../src/config.js";
import { buildDeps, closeDeps } from "../src/deps.js";
import { KeyService } from "../src/features/keys/index.js";
import { startServer } from "../src/server.js";
import { tempDir } from "../test/helpers/env.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

async function start(counting: boolean) {
  const config = parseConfig({ DATA_DIR: tempDir(), LOG_LEVEL: "silent" });
  const deps = await buildDeps(config, pino({ level: "silent" }));
  const storage = createKeyStore(config, deps.database, deps.limiter);
  const keys = counting
    ? deps.keys
    : new KeyService({ storage, verifier: storage, db: deps.database.db, usage: deps.keys.usage });
  const app = createApp({ ...deps, keys });
  const server = await startServer(app, deps, { port: 0, host: "127.0.0.1" });
  const { key } = await keys.create({ name: "bench", permissions: [config.KEY_PERMISSION] });
  return {
    url: `http://127.0.0.1:${server.port}`,
    key,
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
const counted = await start(true);
const rates: { bare: number[]; counted: number[] } = { bare: [], counted: [] };
for (let i = 0; i < 2; i++) {
  rates.bare.push(await run(bare));
  rates.counted.push(await run(counted));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const b = mean(rates.bare);
const c = mean(rates.counted);
const perCallUs = (1e6 / c - 1e6 / b) * 10; // 10 connections in flight
console.log(
  JSON.stringify({
    bare_req_per_s: Math.round(b),
    counted_req_per_s: Math.round(c),
    ratio: Number((c / b).toFixed(3)),
    extra_us_per_call_at_10_connections: Math.round(perCallUs),
    runs: rates,
  }),
);
await bare.close();
await counted.close();
