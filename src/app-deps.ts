import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Config } from "./config.js";
import type { Database } from "./db/database.js";
import type { AnswerCache } from "./http/answer-cache.js";
import type { Drain } from "./http/drain.js";
import type { InvalidKeyThrottle } from "./http/invalid-key-throttle.js";
import type { ActivityLogPort } from "./ports/activity-log.js";
import type { Cache } from "./ports/cache.js";
import type { Classifier } from "./ports/classifier.js";
import type { Forecaster } from "./ports/forecaster.js";
import type { IdempotencyStore } from "./ports/idempotency.js";
import type { KeyServicePort } from "./ports/key-service.js";
import type { MailLane } from "./ports/mail-lane.js";
import type { Metrics } from "./ports/metrics.js";
import type { Payments } from "./ports/payments.js";
import type { PostcodeResolver } from "./ports/postcode-resolver.js";
import type { RateLimiter } from "./ports/rate-limiter.js";
import type { VatRegistry } from "./ports/vat-registry.js";

/** Everything the app needs, built once by the composition root (src/deps.ts buildDeps, or a test with fakes).
 * Features take only the slice they use (`Pick<AppDeps, ...>`), and import this type, never src/deps.ts. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  database: Database;
  limiter: RateLimiter;
  redis?: Redis;
  idempotency: IdempotencyStore;
  now: () => Date;
  /**
   * The key service (features/keys/service.ts): verification, refunds, the operator's key
   * operations, self-service keys under plans (`accounts`) and usage counts (`usage`), over the
   * embedded store, or Unkey when UNKEY_ROOT_KEY is set.
   */
  keys: KeyServicePort;
  /** INVALID_KEY_LIMIT: bounds how many rejected keys per IP reach `keys` (whose outermost layer tells it the verdicts). */
  keyGuesses: InvalidKeyThrottle;
  /** Vibe classification: the embedded VADER model, or the upstream provider when CLASSIFIER_URL is set. */
  classifier: Classifier;
  /** AUTH_SECRET, or the one generated into DATA_DIR: read once here, not inside createApp. */
  authSecret: string;
  /** The SMTP mail lane; undefined when MAIL_URL is unset. */
  mail?: MailLane;
  /** The log of each account's keyed calls and the audit log of its key events (written in batches). */
  activity?: ActivityLogPort;
  /** Stripe Checkout and Customer Portal; undefined unless STRIPE_SECRET_KEY and the plans' prices are set. */
  payments?: Payments;
  /** Lookup caches: Redis-backed when REDIS_URL or REDIS_SENTINELS is set (in-process while Redis errors). */
  cache: Cache;
  /** Serialised lookup answers the hot lane sends again (ANSWER_CACHE_MB; undefined when 0). */
  answers?: AnswerCache;
  /** postcodes.io (uncached; the postcode feature caches). */
  postcodes: PostcodeResolver;
  /** Open-Meteo (uncached; the weather feature caches). */
  forecaster: Forecaster;
  /** VIES registration checks (cached); undefined unless VIES_BASE_URL is set. */
  vatRegistry?: VatRegistry;
  /** Shutting down: begun by the server's close(), read by /readyz. */
  drain: Drain;
}
