import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { expect } from "vitest";
import { MIGRATION_LOCK } from "../../src/db/migrations.js";

/** Set by .ci/run (and by a developer who has the services); suites that need them skip otherwise. */
export const DATABASE_URL = process.env.DATABASE_URL || undefined;
export const REDIS_URL = process.env.REDIS_URL || undefined;

/**
 * Whether a test runner is running this (it sets VITEST in its workers). The benchmarks start
 * servers through these helpers too, where vitest's state does not exist and the default prefix is
 * what they clean up.
 */
const UNDER_VITEST = Boolean(process.env.VITEST);

const prefixes = new Map<string, string>();

/**
 * The running test file's own REDIS_KEY_PREFIX, so test files on one Redis never share a counter
 * (one file's rejected keys once spent another's invalid-key budget, `almanac:rl:invalid-key:unknown`,
 * for 10 minutes), while the instances one file starts share theirs, as the instances of one
 * deployment do. By file, not by module: files share a module registry per worker
 * (`isolate: false`). It starts with `almanac:`, so bench/services.ts's clean-up still finds it.
 */
export function redisKeyPrefix(): string {
  const file = expect.getState().testPath ?? "";
  let prefix = prefixes.get(file);
  if (!prefix) {
    prefix = `almanac:test-${randomBytes(4).toString("hex")}:`;
    prefixes.set(file, prefix);
  }
  return prefix;
}

/** `env` with the test file's REDIS_KEY_PREFIX when it names a Redis and no prefix of its own. */
export const withRedisNamespace = <T extends Record<string, string | undefined>>(env: T): T =>
  env.REDIS_URL && !env.REDIS_KEY_PREFIX && UNDER_VITEST ? { ...env, REDIS_KEY_PREFIX: redisKeyPrefix() } : env;

/** Whether `file args…` runs and exits 0 here (a binary a suite needs is installed). */
export function canRun(file: string, args: string[]): boolean {
  try {
    execFileSync(file, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A new directory under the run's temporary root (removed when the run ends; see temp-root.ts). */
export const tempDir = (prefix = "almanac-test-"): string =>
  mkdtempSync(join(process.env.ALMANAC_TEST_ROOT ?? tmpdir(), prefix));

/**
 * A PostgreSQL URL whose connections use a schema of their own, so parallel test files never
 * see each other's rows. The schema is created now; drop it with `dropSchema`.
 */
export async function freshPostgresUrl(base = DATABASE_URL): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!base) throw new Error("DATABASE_URL is not set");
  const schema = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      // Under the migrations' lock: a migration in another file introspects every schema of the
      // database (Kysely's getTables), and a schema dropped in the middle of that fails it with
      // "schema … does not exist".
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query("begin");
      await c.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK.toString()]);
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.query("commit");
      await c.end();
    },
  };
}

/** Says clearly, once per suite, why a suite did not run. */
export function skipReason(needs: { postgres?: boolean; redis?: boolean }): string | undefined {
  const missing = [needs.postgres && !DATABASE_URL && "DATABASE_URL", needs.redis && !REDIS_URL && "REDIS_URL"].filter(
    Boolean,
  );
  return missing.length ? `skipped: ${missing.join(" and ")} not set (.ci/run sets them)` : undefined;
}

/** How a suite skipped for another reason says why in its title: ` (skipped: why)` when `skip`. */
export function skippedBecause(skip: boolean, why: string): string {
  return skip ? ` (skipped: ${why})` : "";
}

/**
 * A property test's run count: `n` scaled by PROPERTY_RUNS_SCALE, at least 1. `npm test` sets the
 * scale to 0.1 (vitest.config.ts); `npm run test:resilience` runs the files in its PROPERTY_TESTS
 * at full size. A file that calls this belongs in that list.
 */
export function propertyRuns(n: number): number {
  const scale = Number(process.env.PROPERTY_RUNS_SCALE ?? 1);
  return Math.max(1, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

/** An exhaustive check's items at the property-test scale: all of them at full size, else evenly spaced ones. */
export function sampled<T>(items: readonly T[]): T[] {
  const stride = Math.max(1, Math.round(items.length / propertyRuns(items.length)));
  return items.filter((_, i) => i % stride === 0);
}
