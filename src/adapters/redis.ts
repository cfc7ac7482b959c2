import { Redis } from "ioredis";
import type { Logger } from "pino";

/**
 * A Redis client that fails fast instead of queueing: no offline queue, a short command
 * timeout (covers a paused server), and endless background reconnects so recovery needs no
 * restart.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 1000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  let down = false;
  redis.on("error", (err) => {
    if (!down) logger.warn({ err: err.message }, "redis unreachable; using in-process fallbacks");
    down = true;
  });
  redis.on("ready", () => {
    if (down) logger.info("redis reachable again");
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
