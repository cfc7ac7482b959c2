import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, freshPostgresUrl, REDIS_URL, skipReason, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnCli, spawnServer, stop } from "../helpers/process.js";
import { authSecret, createKey } from "../scale/support.js";
import { hasNginx, Nginx } from "../support/nginx.js";

const INSTANCES = 3;
/**
 * Requests per second, half GETs, half charged POSTs, open loop (sent on time whatever the answers
 * do). 200 is the goal; `ROLLING_RATE` sets another.
 */
const RATE = Number(process.env.ROLLING_RATE ?? 200);
const USES = 1_000_000;
const SLOW_START = { startTimeoutMs: 90_000 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Open-loop load through `base`: every 50 ms, RATE/20 requests, alternating a lookup GET and a
 * classify POST with `key`. `stop` stops sending, waits for every answer and reports.
 */
function load(base: string, key: string) {
  const failures: string[] = [];
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let classified = 0;
  const one = async (i: number) => {
    const post = i % 2 === 1;
    const what = post ? "POST /v1/vibe/classify" : "GET /v1/moon";
    try {
      const res = post
        ? await fetch(`${base}/v1/vibe/classify`, {
            method: "POST",
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
            body: JSON.stringify({ texts: [`a lovely day, number ${i}`] }),
          })
        : await fetch(`${base}/v1/moon?date=2024-01-${String((i % 28) + 1).padStart(2, "0")}`);
      const body = await res.text();
      if (res.status !== 200) failures.push(`${what} → ${res.status} ${body.slice(0, 200)}`);
      else if (post) classified += 1;
    } catch (err) {
      failures.push(`${what} → ${(err as Error).message} ${String((err as Error).cause ?? "")}`);
    }
  };
  const timer = setInterval(() => {
    for (let k = 0; k < RATE / 20; k++) {
      const p = one(sent++);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, 50);
  return {
    async stop() {
      clearInterval(timer);
      while (inFlight.size > 0) await Promise.all(inFlight);
      return { sent, classified, failures };
    },
  };
}

// The compose topology at three instances, restarted one after another under load: each gets
// SIGTERM, drains and exits, and a new process takes its port, while nginx (deploy/nginx.conf)
// spreads the calls. No call may fail and no classify call may be charged twice.
describe.skipIf(!hasNginx || !DATABASE_URL || !REDIS_URL)(
  `rolling restart of ${INSTANCES} instances behind nginx at ${RATE} requests/s ${
    hasNginx ? (skipReason({ postgres: true, redis: true }) ?? "") : "skipped: nginx is not installed"
  }`,
  { timeout: 600_000 },
  () => {
    let pg: { url: string; drop: () => Promise<void> };
    let env: Record<string, string>;
    let cliEnv: Record<string, string>;
    const instances: ServerProcess[] = [];
    let lb: Nginx;

    beforeAll(async () => {
      pg = await freshPostgresUrl();
      env = {
        DATABASE_URL: pg.url,
        REDIS_URL: REDIS_URL as string,
        AUTH_SECRET: authSecret(),
        TRUST_PROXY: "1",
        DEMO_HOURLY_LIMIT: "1000000",
      };
      cliEnv = { DATABASE_URL: pg.url, DATA_DIR: tempDir() };
      for (let i = 0; i < INSTANCES; i++)
        instances.push(await spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START));
      lb = await Nginx.start(instances.map((s) => s.port));
    }, 300_000);

    afterAll(async () => {
      await lb?.stop();
      await Promise.all(instances.map((s) => stop(s)));
      await pg?.drop();
    });

    it("every call is answered 200 while each instance in turn drains and restarts; each charged once", async () => {
      const key = await createKey(cliEnv, "--remaining", String(USES));
      const traffic = load(lb.url, key.key);
      await sleep(2000);
      const exits: (number | null)[] = [];
      const events: string[] = [];
      for (let i = 0; i < INSTANCES; i++) {
        const old = instances[i] as ServerProcess;
        events.push(`${new Date().toISOString()} SIGTERM ${old.port}`);
        old.proc.kill("SIGTERM");
        exits.push(await old.exited);
        events.push(`${new Date().toISOString()} exited ${old.port}`);
        // How it drained (listener open for how long, cut at the deadline or not), read at the end.
        for (const line of old.output().split("\n"))
          if (/drain|shutdown deadline|shutting down/.test(line)) events.push(`  ${old.port} ${line.slice(0, 200)}`);
        instances[i] = await spawnServer({ ...env, DATA_DIR: tempDir() }, { ...SLOW_START, port: old.port });
        events.push(`${new Date().toISOString()} started ${old.port}`);
        await sleep(2000);
      }
      const { sent, classified, failures } = await traffic.stop();
      const kinds = new Map<string, number>();
      for (const f of failures) {
        const kind = f.replace(/"request_id":"[^"]*"/, "").slice(0, 120);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      // Uses the key lost: one per classify answered 200 when none is lost or charged twice.
      const listed = await spawnCli(["keys", "list"], cliEnv);
      const remaining = (JSON.parse(listed.stdout) as { id: string; remaining: number }[]).find(
        (k) => k.id === key.id,
      )?.remaining;
      const charged = USES - (remaining ?? 0);
      console.log(JSON.stringify({ sent, classified, charged, failed: failures.length, kinds: [...kinds] }, null, 1));
      // What nginx saw, and when each restart happened, to read a failure by.
      const log = lb.log().split("\n");
      const seen = new Map<string, number>();
      for (const line of log) {
        const what =
          /\] \d+#\d+: \*\d+ ([^,]*?)(?: while [^,]*)?, client.*request: "(\w+)[^"]*", upstream: "http:\/\/([^/]*)/.exec(
            line,
          );
        const other = /\[(?:warn|error|alert|crit)\] \d+#\d+: (.*)$/.exec(line)?.[1]?.slice(0, 80);
        const key = what ? `${what[2]} ${what[3]}: ${what[1]}` : other;
        if (key) seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      console.log(`${events.join("\n")}\nnginx: ${JSON.stringify([...seen], null, 1)}`);
      if (failures.length > 0) console.log(log.slice(-40).join("\n"));
      // ROLLING_LOG=<file>: the whole record (restarts, drains, nginx's log, failures) for reading.
      if (process.env.ROLLING_LOG) writeFileSync(process.env.ROLLING_LOG, [...events, ...log, ...failures].join("\n"));

      expect(failures).toEqual([]);
      // It drained: no connection was cut at the shutdown deadline.
      expect(events.filter((e) => e.includes("shutdown deadline"))).toEqual([]);
      expect(exits).toEqual(Array(INSTANCES).fill(0));
      expect(sent).toBeGreaterThan(RATE * 5);
      // One charge per answered classify call: none lost, none twice.
      expect(charged).toBe(classified);
      console.log(`rolling restart: ${sent} calls (${classified} classify), 0 failed`);
    });
  },
);
