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
