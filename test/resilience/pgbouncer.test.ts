import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, skippedBecause, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { call, createKey } from "../scale/support.js";
import { PgBouncer, pgbouncerUnavailable } from "../support/pgbouncer.js";

const unavailable = DATABASE_URL ? pgbouncerUnavailable() : "DATABASE_URL is not set (.ci/run sets it)";
/** Each instance's start compiles the sources (tsx): slow on a loaded machine. */
const SLOW_START = { startTimeoutMs: 60_000 };
const USES = 100;

async function onServer<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(DATABASE_URL as string);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe.skipIf(unavailable)(
  `PgBouncer 1.18 in transaction mode (deploy/pgbouncer.ini) in front of PostgreSQL${skippedBecause(Boolean(unavailable), unavailable ?? "")}`,
  () => {
    // A database of its own: PgBouncer passes no per-connection search_path (`options`), so the
    // schema is the database's default one.
    const dbname = `t_pgb_${randomBytes(6).toString("hex")}`;
    const home = new URL(DATABASE_URL ?? "postgres://localhost/");
    let bouncer: PgBouncer;
    const servers: ServerProcess[] = [];
    let url = "";

    beforeAll(async () => {
      await onServer(home.pathname.slice(1), (c) => c.query(`create database ${dbname}`));
      bouncer = await PgBouncer.start({
        host: home.hostname,
        port: Number(home.port || 5432),
        user: decodeURIComponent(home.username || "postgres"),
        dbname,
      });
      url = `postgres://${home.username || "postgres"}@127.0.0.1:${bouncer.port}/almanac`;
    }, 60_000);

    afterAll(async () => {
      await Promise.all(servers.map((s) => stop(s)));
      await bouncer?.stop();
      await onServer(home.pathname.slice(1), (c) => c.query(`drop database if exists ${dbname} with (force)`));
    });

    it("two instances start and migrate together through it, then charge a burst of keyed calls exactly once", async () => {
      const env = { DATABASE_URL: url, LOG_LEVEL: "warn" };
      const started = await Promise.allSettled([
        spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START),
        spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START),
      ]);
      for (const s of started) if (s.status === "fulfilled") servers.push(s.value);
      expect(started.map((s) => (s.status === "rejected" ? String(s.reason) : "started"))).toEqual([
        "started",
        "started",
      ]);
      const [a, b] = servers as [ServerProcess, ServerProcess];

      // Each migration applied once, and no lock left behind on any server connection.
      const applied = await onServer(dbname, async (c) => {
        const { rows } = await c.query<{ name: string }>("select name from kysely_migration");
        const locks = await c.query("select 1 from pg_locks where locktype = 'advisory'");
        return { names: rows.map((r) => r.name), locks: locks.rowCount };
      });
      expect(applied.names.length).toBeGreaterThan(10);
      expect(new Set(applied.names).size).toBe(applied.names.length);
      expect(applied.locks).toBe(0);

      // A burst over both instances: 20 Idempotency-Keys sent three times each at once, and 20
      // calls without one.
      const key = await createKey({ DATABASE_URL: url, DATA_DIR: tempDir() }, "--remaining", String(USES));
      const body = JSON.stringify(["what a lovely day"]);
      const headers = { "Content-Type": "application/json", Authorization: `Bearer ${key.key}` };
      const idempotencyKeys = Array.from({ length: 20 }, () => randomUUID());
      const answers = await Promise.all([
        ...idempotencyKeys.flatMap((k, i) =>
          [0, 1, 2].map((j) =>
            call((i + j) % 2 ? a.url : b.url, "/v1/vibe/classify", {
              method: "POST",
              headers: { ...headers, "Idempotency-Key": k },
              body,
            }),
          ),
        ),
        ...Array.from({ length: 20 }, (_, i) =>
          call(i % 2 ? a.url : b.url, "/v1/vibe/classify", { method: "POST", headers, body }),
        ),
      ]);
      const byStatus: Record<number, number> = {};
      for (const r of answers) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      expect(byStatus, JSON.stringify(answers.find((r) => r.status !== 200)?.body)).toEqual({ 200: 80 });
      const remaining = await onServer(dbname, async (c) => {
        const { rows } = await c.query<{ remaining: number }>("select remaining from api_keys where id = $1", [key.id]);
        return rows[0]?.remaining;
      });
      expect(remaining).toBe(USES - 40);
      expect(bouncer.output()).not.toMatch(/prepared statement|unsupported startup parameter/);
      console.info(
        `pgbouncer (transaction pooling): two instances started and migrated together (${applied.names.length} migrations, each once); ` +
          `80 keyed calls answered ${JSON.stringify(byStatus)}, ${USES - (remaining ?? 0)} uses charged for 40 distinct calls`,
      );
    });
  },
);
