import { Redis } from "ioredis";
import pg from "pg";
import { freshPostgresUrl } from "../test/helpers/env.js";

/** A logical database of its own, so the bench's demo counters never meet the tests' (db 0). */
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379/15";
export const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Clears Almanac's keys from the bench's Redis database; a reason string when Redis is unreachable. */
export async function resetRedis(): Promise<string | undefined> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0 });
  redis.on("error", () => {});
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", "almanac:*", "COUNT", 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    return undefined;
  } catch (err) {
    return `Redis unreachable at ${REDIS_URL} (${(err as Error).message})`;
  } finally {
    redis.disconnect();
  }
}

/** A fresh schema on the bench's PostgreSQL, or the reason it cannot be had. */
export async function postgresSchema(): Promise<{ url: string; drop: () => Promise<void> } | string> {
  const probe = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 1500 });
  try {
    await probe.connect();
  } catch (err) {
    return `PostgreSQL unreachable at ${DATABASE_URL} (${(err as Error).message})`;
  } finally {
    await probe.end().catch(() => {});
  }
  return freshPostgresUrl(DATABASE_URL);
}
