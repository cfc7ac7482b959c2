import cluster from "node:cluster";
import type { Logger } from "pino";
import { createLogger } from "./adapters/logger.js";
import { createApp } from "./app.js";
import { runPrimary } from "./cluster.js";
import type { Config } from "./config.js";
import { ExpiredRowsSweep } from "./db/expired-rows.js";
import { IDEMPOTENCY_EXPIRY } from "./db/idempotency.js";
import { buildDeps, closeDeps } from "./deps.js";
import { AUTH_EXPIRIES } from "./features/account/index.js";
import { createContactOutbox } from "./features/contact/outbox.js";
import { ACTIVITY_EXPIRIES, createExpiryReminders } from "./features/keys/index.js";
import { startServer } from "./server.js";

/**
 * The process: build dependencies, listen, and on SIGTERM/SIGINT drain (http/drain.ts: stop
 * accepting, answer what is in flight with `Connection: close`, wait for the last connection to
 * close), close the database and Redis, exit 0.
 */
export async function serve(config: Config, logger: Logger = createLogger(config.LOG_LEVEL)): Promise<void> {
  if (config.WEB_CONCURRENCY > 1 && cluster.isPrimary) return runPrimary(config, logger);
  const started = performance.now();
  const deps = await buildDeps(config, logger);
  const app = createApp(deps);
  const running = await startServer(app, deps, { port: config.PORT, host: config.HOST });
  const outbox = createContactOutbox(deps);
  outbox.start();
  const reminders = createExpiryReminders(deps);
  reminders.start();
  const sweep = new ExpiredRowsSweep(deps.database, deps.logger, deps.now, [
    ...AUTH_EXPIRIES,
    IDEMPOTENCY_EXPIRY,
    ...ACTIVITY_EXPIRIES,
  ]);
  sweep.start();
  logger.info(
    {
      port: running.port,
      database: deps.database.dialect,
      redis: Boolean(deps.redis),
      startup_ms: Math.round(performance.now() - started),
    },
    `Almanac listening on http://${config.HOST}:${running.port}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, connections: deps.drain.sockets }, "shutting down: draining");
    await running.close();
    await outbox.stop();
    await reminders.stop();
    await sweep.stop();
    await closeDeps(deps);
    logger.info("stopped");
    logger.flush?.();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}
