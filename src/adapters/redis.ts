import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import type { RedisSettings } from "../config.js";

/** Reconnects (no retry of the command) when a write reaches a replica: the primary moved. */
const reconnectOnReadonly = (err: Error) => err.message.startsWith("READONLY");

/** Waits between reconnect attempts, to the server and to the Sentinels alike: never gives up. */
const backoff = (times: number) => Math.min(times * 100, 1000);

/**
 * The Redis client every Redis user of the app shares (limiter, caches). It fails fast instead
 * of queueing: no offline queue, a short command timeout (covers a paused server), and endless
 * background reconnects so recovery needs no restart.
 *
 * With REDIS_SENTINELS, the Sentinels are asked where the primary of REDIS_SENTINEL_NAME is, and
 * asked again on every reconnect; the client drops its connection as soon as a Sentinel announces
 * a new primary (`+switch-master`), or when a write is refused by a former primary that is now a
 * replica (READONLY). REDIS_URL, when also set, gives only its user, password and database number.
 */
export function createRedis(settings: RedisSettings, logger: Logger): Redis {
  const options: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 1000,
    lazyConnect: false,
    retryStrategy: backoff,
    reconnectOnError: reconnectOnReadonly,
  };
  if (settings.REDIS_SENTINELS) {
    Object.assign(options, {
      sentinels: settings.REDIS_SENTINELS,
      name: settings.REDIS_SENTINEL_NAME,
      sentinelRetryStrategy: backoff,
      sentinelCommandTimeout: 1000,
      failoverDetector: true,
    } satisfies RedisOptions);
  }
  const redis = settings.REDIS_URL ? new Redis(settings.REDIS_URL, options) : new Redis(options);
  // One line when the connection goes (an error, or a Sentinel's switch), one when it is back:
  // with the address it is back at, and the one it left when that changed (a failover).
  let down = false;
  let primary = "";
  const lost = (fields: Record<string, string>, message: string) => {
    if (!down) logger.warn(fields, message);
    down = true;
  };
  redis.on("error", (err) => lost({ err: err.message }, "redis unreachable; using in-process fallbacks"));
  redis.on("reconnecting", () => lost({ redis: primary }, "redis connection lost; using in-process fallbacks"));
  redis.on("ready", () => {
    const at = `${redis.stream?.remoteAddress}:${redis.stream?.remotePort}`;
    if (primary && at !== primary) logger.info({ redis: at, was: primary }, "redis primary changed");
    else if (down) logger.info({ redis: at }, "redis reachable again");
    primary = at;
    down = false;
  });
  return redis;
}

/**
 * Resolves once `redis` is ready, or after `ms` (whichever is first), so a fresh process
 * starts counting in Redis from its first request instead of falling back while the
 * connection is still being made. A Redis that is down at start does not block the start.
 */
export function untilReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.once("ready", onReady);
  });
}
