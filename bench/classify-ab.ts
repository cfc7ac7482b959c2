/**
 * The per-call cost of one part of classify, A/B: the same build started twice in one run, without
 * the part (A) and with it as served (B), called alternately with autocannon (10 connections) on
 * `POST /v1/vibe/classify`. The part is the variant named first on the command line:
 *
 * - `call-log`: the log of each account's keyed calls (a key with an owner, no plan);
 * - `spend-in-lookup` (DATABASE_URL): the embedded store's one statement that looks a key up and
 *   spends its uses, against a lookup and a spend (a key with uses of its own, no rate limit;
 *   BENCH_POOL=1: an account-page key, which also spends its account's pool);
 * - `usage-accounting`: the key service's composed layers (counts per key and hour, the account
 *   layer, the throttle) against the bare key store;
 * - `model`: the shipped sentiment weights against the weights file BENCH_MODEL_A (for instance
 *   the previous model's, `git show main:src/adapters/classifier/model/sentiment.bin > FILE`).
 *
 * `node --import tsx bench/classify-ab.ts <variant>` (BENCH_SECONDS, default 5; BENCH_PAIRS, default 3;
 * BENCH_POOL; BENCH_MODEL_A;
 * DATABASE_URL to run on PostgreSQL). Prints one JSON line: the rates, their ratio (B / A), the
 * extra microseconds a call spends with the part, this process's CPU per call (server and
 * autocannon: the same load generator on both sides) and p99 latency.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import pino from "pino";
import { decodeModel } from "../src/adapters/classifier/model-file.js";
import { TrainedClassifier } from "../src/adapters/classifier/trained.js";
import { createKeyStore } from "../src/adapters/keys/factory.js";
import { type App, createApp } from "../src/app.js";
import type { AppDeps } from "../src/app-deps.js";
import { type Config, parseConfig } from "../src/config.js";
import { buildDeps, closeDeps } from "../src/deps.js";
import { AccountQuotas, KeyService } from "../src/features/keys/index.js";
import { PLANS } from "../src/features/keys/plans.js";
import { startServer } from "../src/server.js";
import { tempDir } from "../test/helpers/env.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const CONNECTIONS = 10;

interface Variant {
  /** The app without (`on` false) or with the part, and the key to call it with. */
  build(deps: AppDeps, config: Config, on: boolean): Promise<{ app: App; key: string }>;
  /** What the B side did, for the report (optional). */
  report?(deps: AppDeps): Promise<Record<string, unknown>>;
}

const VARIANTS: Record<string, Variant> = {
  model: {
    async build(deps, config, on) {
      const other = process.env.BENCH_MODEL_A;
      if (!other) throw new Error("model: BENCH_MODEL_A names the weights file to compare with");
      const classifier = on ? deps.classifier : new TrainedClassifier(decodeModel(readFileSync(other)));
      const { key } = await deps.keys.create({ name: "bench", permissions: [config.KEY_PERMISSION] });
      return { app: createApp({ ...deps, classifier }), key };
    },
    report: async (deps) => ({ model: deps.classifier.model }),
  },
  "call-log": {
    async build(deps, config, on) {
      const app = createApp({ ...deps, activity: on ? deps.activity : undefined });
      const { key } = await deps.keys.create({
        name: "bench",
        ownerId: "bench-owner",
        permissions: [config.KEY_PERMISSION],
      });
      return { app, key };
    },
    report: async (deps) => ({ calls_logged: (await deps.activity?.listCalls("bench-owner", {}, 5))?.length ?? 0 }),
  },
  "spend-in-lookup": {
    async build(deps, config, on) {
      // The embedded store on PostgreSQL, with (as served) and without its statement that looks a
      // key up and spends its uses in one round trip (`spending`, adapters/keys/spend-in-lookup.ts).
      const storage = deps.keys.storage as unknown as { spending?: unknown };
      if (!storage.spending) throw new Error("spend-in-lookup: the embedded store on PostgreSQL (DATABASE_URL)");
      if (!on) storage.spending = undefined;
      const pool = process.env.BENCH_POOL === "1" ? `bench-${randomUUID()}` : undefined;
      const { key, id } = await deps.keys.create({
        name: "bench",
        permissions: [config.KEY_PERMISSION],
        remaining: 1e9,
        ownerId: pool,
      });
      if (pool) await poolOf(deps, pool, id);
      return { app: createApp(deps), key };
    },
  },
  "usage-accounting": {
    async build(deps, config, on) {
      const storage = createKeyStore(config, deps.database, deps.limiter, new AccountQuotas(deps.database.db));
      const keys = on
        ? deps.keys
        : new KeyService({ storage, verifier: storage, db: deps.database.db, usage: deps.keys.usage });
      const { key } = await keys.create({ name: "bench", permissions: [config.KEY_PERMISSION] });
      return { app: createApp({ ...deps, keys }), key };
    },
  },
};

/**
 * Puts key `id` on a pro account whose pool has uses enough for the run; the plan's rate limit is
 * lifted in this process (the limiter is still asked), so that every call is served.
 */
async function poolOf(deps: AppDeps, owner: string, id: string) {
  PLANS.pro.ratelimit = { limit: 1e9, durationSec: 60 };
  const now = new Date().toISOString();
  const db = deps.database.db;
  await db
    .insertInto("key_ledger")
    .values({ id: `res_${id}`, key_id: id, owner_id: owner, name: "bench", plan: "pro", created_at: now, pool: owner })
    .execute();
  await db.insertInto("account_quotas").values({ owner_id: owner, remaining: 1e9, updated_at: now }).execute();
}

async function start(variant: Variant, on: boolean) {
  const config = parseConfig({
    DATA_DIR: tempDir(),
    LOG_LEVEL: "silent",
    ...(process.env.DATABASE_URL && { DATABASE_URL: process.env.DATABASE_URL }),
  });
  const deps = await buildDeps(config, pino({ level: "silent" }));
  const { app, key } = await variant.build(deps, config, on);
  const server = await startServer(app, deps, { port: 0, host: "127.0.0.1" });
  return {
    url: `http://127.0.0.1:${server.port}`,
    key,
    deps,
    close: async () => {
      await server.close();
      await closeDeps(deps);
    },
  };
}

const cpu: { without: number[]; with: number[] } = { without: [], with: [] };
const p99: { without: number[]; with: number[] } = { without: [], with: [] };
async function run(target: { url: string; key: string }, side: "without" | "with"): Promise<number> {
  const before = process.cpuUsage();
  const result = await autocannon({
    url: `${target.url}/v1/vibe/classify`,
    method: "POST",
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
    body: '["What a lovely day"]',
  });
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers`);
  const used = process.cpuUsage(before);
  cpu[side].push(Math.round((used.user + used.system) / result.requests.total));
  p99[side].push(result.latency.p99);
  return result.requests.average;
}

const name = process.argv[2] ?? "";
const variant = VARIANTS[name];
if (!variant) {
  console.error(`usage: bench/classify-ab.ts <${Object.keys(VARIANTS).join("|")}>`);
  process.exit(2);
}
const without = await start(variant, false);
const withPart = await start(variant, true);
const rates: { without: number[]; with: number[] } = { without: [], with: [] };
for (let i = 0; i < PAIRS; i++) {
  rates.without.push(await run(without, "without"));
  rates.with.push(await run(withPart, "with"));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const a = mean(rates.without);
const b = mean(rates.with);
console.log(
  JSON.stringify({
    variant: name,
    without_req_per_s: Math.round(a),
    with_req_per_s: Math.round(b),
    ratio: Number((b / a).toFixed(3)),
    extra_us_per_call: Math.round((1e6 / b - 1e6 / a) * CONNECTIONS),
    cpu_us_per_call: {
      without: mean(cpu.without),
      with: mean(cpu.with),
      ratio: Number((mean(cpu.with) / mean(cpu.without)).toFixed(3)),
    },
    p99_ms: { without: mean(p99.without), with: mean(p99.with) },
    ...(await variant.report?.(withPart.deps)),
    runs: rates,
  }),
);
await without.close();
await withPart.close();
