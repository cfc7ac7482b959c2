import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { testApp } from "../test/helpers/app.js";
import { freshPostgresUrl } from "../test/helpers/env.js";
import { expectValue } from "../test/helpers/result.js";
import { CLASSIFY_TEXTS } from "./fixtures.js";
import { DATABASE_URL, REDIS_URL } from "./services.js";

/**
 * The paid path's cost on PostgreSQL, per call: statements sent, Node CPU and PostgreSQL backend
 * CPU (its connections' /proc times), for three kinds of key (no limits, own uses and rate limit,
 * an account-page key): the key store's verify alone, a classify call, and one with an Idempotency-Key. In-process (`app.request`, 16 calls in
 * flight), so a loaded host disturbs it far less than autocannon.
 * `node --import tsx bench/key-verify.ts [calls]`
 */
const CALLS = Number(process.argv[2] ?? 3000);
const IN_FLIGHT = 16;
const TICK_US = 1e6 / 100; // USER_HZ

function backendCpuUs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(f[11]) + Number(f[12]);
    } catch {}
  }
  return ticks * TICK_US;
}

async function main() {
  const schema = await freshPostgresUrl(DATABASE_URL);
  const app = `almanac-kv-${process.pid}`;
  const url = new URL(schema.url);
  url.searchParams.set("application_name", app);
  const t = await testApp({ DATABASE_URL: url.toString(), REDIS_URL, LOG_LEVEL: "silent" });
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    const ak = t.deps.keys.accounts;
    const email = `kv-${Date.now()}@example.test`;
    await ak.plans.grant(email, "pro", "cli");
    const owner = { ownerId: `kv_${Date.now()}`, email, permissions: ["vibe.classify"], expiresAt: null };
    const account = expectValue(await ak.create({ ...owner, name: "a" }));
    await t.deps.database.db.updateTable("account_quotas").set({ remaining: 1e9 }).execute();
    const keys = {
      plain: (await t.deps.keys.create({ name: "p", permissions: ["vibe.classify"] })).key,
      limited: (
        await t.deps.keys.create({
          name: "l",
          permissions: ["vibe.classify"],
          remaining: 1e9,
          ratelimit: { limit: 1e9, durationSec: 60 },
        })
      ).key,
      account: account.key,
    };
    // The account's plan rate limit would refuse most calls: raise it for the measurement.
    const plans = await import("../src/features/keys/plans.js");
    for (const p of Object.values(plans.PLANS)) Object.assign((p as { ratelimit: object }).ratelimit, { limit: 1e9 });
    const body = JSON.stringify({ texts: CLASSIFY_TEXTS });
    let sent = 0;
    const origQuery = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent++;
      return (origQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof origQuery;
    for (const [name, key] of Object.entries(keys)) {
      for (const mode of ["verify", "classify", "idempotent"] as const) {
        const idem = mode === "idempotent";
        let n = 0;
        const call = async () => {
          const i = n++;
          if (mode === "verify") {
            const v = await t.deps.keys.verify(key, "vibe.classify", { cost: 1 });
            if (v.kind !== "verdict" || v.code !== "VALID") throw new Error(`${name}: ${JSON.stringify(v)}`);
            return;
          }
          const res = await t.app.request("/v1/vibe/classify", {
            method: "POST",
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              ...(idem && { "idempotency-key": `kv-${name}-${i}-${Date.now()}` }),
            },
            body,
          });
          if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        };
        const run = async (calls: number) => {
          let left = calls;
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async () => {
              while (left-- > 0) await call();
            }),
          );
        };
        await run(300);
        await t.deps.keys.usage.flush();
        const { rows } = await admin.query("select pid from pg_stat_activity where application_name = $1", [app]);
        const pids = rows.map((r: { pid: number }) => r.pid);
        sent = 0;
        const pg0 = backendCpuUs(pids);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await run(CALLS);
        const ms = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const pgUs = backendCpuUs(pids) - pg0;
        console.log(
          `${`${name}, ${mode}`.padEnd(22)} ${(sent / CALLS).toFixed(2)} statements/call  ` +
            `Node ${((cpu.user + cpu.system) / CALLS).toFixed(0).padStart(4)} µs  PostgreSQL ${(pgUs / CALLS).toFixed(0).padStart(4)} µs  ` +
            `${Math.round((CALLS * 1000) / ms).toLocaleString("en")} calls/s`,
        );
      }
    }
  } finally {
    await admin.end();
    await t.close();
    await schema.drop();
  }
}

await main();
