import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import { prepareLimitsFile } from "./adapters/limiter.js";
import { openMigrated } from "./admin.js";
import { type Config, usesRedis } from "./config.js";

/**
 * WEB_CONCURRENCY > 1: this (primary) process migrates once, then forks N workers that share
 * the listening port. Without Redis, the workers share the rate-limit counters through
 * DATA_DIR/limits.db (adapters/limiter.ts), so limits stay exact. SIGTERM/SIGINT are passed on; the
 * primary exits 0 once every worker has drained and exited.
 */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const { database } = await openMigrated(config, logger, { auth: true }); // better-auth loads only here
  await database.close();
  if (!usesRedis(config)) prepareLimitsFile(config.DATA_DIR);

  let stopping = false;
  /** A worker exited before it ever listened (port in use, a bad HOST): forking again would fail alike. */
  let failedToStart = false;
  const listened = new Set<number>();
  const fork = (): Worker => cluster.fork();
  cluster.on("listening", (worker) => listened.add(worker.id));
  cluster.on("exit", (worker, code, signal) => {
    if (!stopping && !listened.has(worker.id)) {
      logger.fatal({ pid: worker.process.pid, code, signal }, "worker failed to start; stopping");
      failedToStart = true;
      stop("SIGTERM");
    }
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info("all workers stopped");
        process.exit(failedToStart ? 1 : 0);
      }
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, "worker died; starting another");
    fork();
  });
  for (let i = 0; i < config.WEB_CONCURRENCY; i++) fork();
  logger.info({ workers: config.WEB_CONCURRENCY, port: config.PORT }, "Almanac primary started");

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping workers");
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}
