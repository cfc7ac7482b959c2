import type { Logger } from "pino";
import { MemoryCache, RedisCache } from "./adapters/cache.js";
import { createClassifier } from "./adapters/classifier/factory.js";
import { createKeyStore } from "./adapters/keys/factory.js";
import { SqliteRateLimiter } from "./adapters/limiter.js";
import { PromMetrics } from "./adapters/metrics.js";
import { OpenMeteoForecaster } from "./adapters/open-meteo.js";
import { PostcodesIoResolver } from "./adapters/postcodes-io.js";
import { createVatRegistry } from "./adapters/vies.js";
import { openMigrated } from "./admin.js";
import type { AppDeps } from "./app-deps.js";
import { type Config, type RedisSettings, resolveAuthSecret, usesRedis } from "./config.js";
import { poolSettings } from "./db/database.js";
import { SqlIdempotencyStore } from "./db/idempotency.js";
import { AccountQuotas, ActivityLog, Counted, KeyService, Pooled, UsageCounter } from "./features/keys/index.js";
import { AnswerCache } from "./http/answer-cache.js";
import { Drain } from "./http/drain.js";
import { InvalidKeyThrottle, Throttled } from "./http/invalid-key-throttle.js";

export type { AppDeps };

// Optional adapters are imported only when the configuration selects them: a server on the
// embedded defaults never loads ioredis or nodemailer (start-up time and
// memory; test/main.test.ts checks which packages a default start loads).

/** Redis and the limiter on it, when REDIS_URL or REDIS_SENTINELS is set. */
async function redisAdapters(settings: RedisSettings, prefix: string, logger: Logger, metrics: PromMetrics) {
  const [{ createRedis, untilReady }, { RedisRateLimiter }] = await Promise.all([
    import("./adapters/redis.js"),
    import("./adapters/redis-limiter.js"),
  ]);
  const redis = createRedis(settings, logger);
  await untilReady(redis, 1000);
  return { redis, limiter: new RedisRateLimiter(redis, metrics, `${prefix}rl:`) };
}

/** The SMTP mail lane, when MAIL_URL is set. */
async function mailLane(config: Config, logger: Logger) {
  if (!config.MAIL_URL) return undefined;
  const { createSmtpMailLane } = await import("./adapters/smtp-mail.js");
  return createSmtpMailLane({
    url: config.MAIL_URL,
    from: config.MAIL_FROM,
    timeoutMs: config.MAIL_TIMEOUT_MS,
    logger,
  });
}

/** Builds the real dependencies for `config`, applying migrations. */
export async function buildDeps(config: Config, logger: Logger): Promise<AppDeps> {
  const metrics = new PromMetrics({ defaultMetrics: true });
  const { database } = await openMigrated(config, logger, { pool: poolSettings(config) });
  // Without Redis the counters live in DATA_DIR/limits.db: they survive restarts and are shared
  // by this machine's WEB_CONCURRENCY workers.
  const { redis, limiter } = usesRedis(config)
    ? await redisAdapters(config, config.REDIS_KEY_PREFIX, logger, metrics)
    : { redis: undefined, limiter: new SqliteRateLimiter(config.DATA_DIR) };
  const upstream = { timeoutMs: config.UPSTREAM_TIMEOUT_MS, maxBytes: config.UPSTREAM_MAX_BYTES, metrics };
  const usage = new UsageCounter(database.db, {
    onError: (err) => logger.warn({ err: (err as Error).message }, "usage counts not written; kept for the next flush"),
  });
  const keyGuesses = new InvalidKeyThrottle(limiter, config.INVALID_KEY_LIMIT);
  const quotas = new AccountQuotas(database.db);
  const storage = createKeyStore(config, database, limiter, quotas);
  const activity = new ActivityLog(database.db, {
    onError: (err) =>
      logger.warn({ err: (err as Error).message }, "call and audit log not written; kept for the next flush"),
  });
  const keys = new KeyService({
    storage,
    db: database.db,
    usage,
    onEvent: (e) => activity.recordAudit(e),
    // Every verification, outermost first: the throttle learns which tokens are keys; charged calls
    // are counted per key and hour; account-page keys spend their account's uses and rate limit;
    // the adapter looks the key up and spends its own.
    verifier: new Throttled(keyGuesses, new Counted(usage, new Pooled(quotas, limiter, storage))),
  });
  return {
    config,
    logger,
    metrics,
    activity,
    authSecret: resolveAuthSecret(config),
    database,
    limiter,
    answers: config.ANSWER_CACHE_MB > 0 ? new AnswerCache(config.ANSWER_CACHE_MB * 1024 * 1024) : undefined,
    redis,
    idempotency: new SqlIdempotencyStore(database.db),
    cache: redis
      ? new RedisCache(redis, {
          prefix: `${config.REDIS_KEY_PREFIX}cache:`,
          onFallback: () => metrics.upstreamError("redis", "cache_fallback"),
          // A postcode load is at most two upstream calls, each within UPSTREAM_TIMEOUT_MS.
          flightLeaseMs: 2 * config.UPSTREAM_TIMEOUT_MS + 1000,
        })
      : new MemoryCache(),
    postcodes: new PostcodesIoResolver({ ...upstream, baseUrl: config.POSTCODES_BASE_URL }),
    forecaster: new OpenMeteoForecaster({ ...upstream, baseUrl: config.OPEN_METEO_BASE_URL }),
    vatRegistry: createVatRegistry(config, metrics),
    now: () => new Date(),
    drain: new Drain(),
    keys,
    keyGuesses,
    classifier: createClassifier(config),
    mail: await mailLane(config, logger),
    payments: await payments(config),
  };
}

/** Stripe Checkout and the Customer Portal, when STRIPE_SECRET_KEY and both plans' prices are set. */
async function payments(config: Config) {
  const { STRIPE_SECRET_KEY: secretKey, STRIPE_PRICE_PRO: pro, STRIPE_PRICE_SCALE: scale } = config;
  if (!secretKey || !pro || !scale) return undefined;
  const { createStripePayments } = await import("./adapters/stripe-payments.js"); // a large SDK, loaded only when used
  return createStripePayments({
    secretKey,
    apiBase: config.STRIPE_API_BASE,
    prices: { pro, scale },
    timeoutMs: Math.max(config.UPSTREAM_TIMEOUT_MS, 10_000),
  });
}

/** Releases what buildDeps opened. */
export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.keys.usage.close().catch(() => undefined);
  await deps.activity?.close().catch(() => undefined);
  await deps.limiter.close();
  await deps.mail?.close();
  if (deps.redis) await deps.redis.quit().catch(() => deps.redis?.disconnect());
  await deps.database.close();
}
