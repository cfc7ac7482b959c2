import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";

/** Empty strings count as unset, so `FOO=` in a .env file means "use the default". */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

/** Decimal digits only (not 0x10, 1e3 or " 80", which Number() would take), from `min` to `max`. */
const int = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.preprocess(
    (v) => (typeof v === "number" ? String(v) : v),
    z.string().regex(/^\d+$/, message).transform(Number).pipe(z.number().min(min, message).max(max, message)),
  );
};

const url = (protocols: string[]) =>
  z.url({ protocol: new RegExp(`^(${protocols.join("|")})$`), error: `must be a ${protocols.join(" or ")} URL` });

const httpUrl = url(["http", "https"]);

/** `host:port` (an IPv6 host in brackets); the port defaults to Sentinel's 26379. */
const SENTINEL_ADDRESS = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/;

/** REDIS_SENTINELS: `host:port,…`, one or more, each a Sentinel of the same deployment. */
const sentinelList = z.string().transform((v, ctx) => {
  const list: { host: string; port: number }[] = [];
  for (const item of v.split(",").map((s) => s.trim())) {
    const m = SENTINEL_ADDRESS.exec(item);
    const port = Number(m?.[3] ?? 26379);
    if (!m || port < 1 || port > 65535) {
      ctx.addIssue({ code: "custom", message: `"${item}" is not host:port (a list: host:port,host:port,…)` });
      return z.NEVER;
    }
    list.push({ host: (m[1] ?? m[2]) as string, port });
  }
  return list;
});

const EnvSchema = z.object({
  NODE_ENV: optional(z.enum(["development", "production", "test"])),
  PORT: optional(int(0, 65535)).default(8080),
  HOST: optional(z.string()).default("0.0.0.0"),
  DATA_DIR: optional(z.string()).default("./data"),
  DATABASE_URL: optional(url(["postgres", "postgresql"])),
  DATABASE_POOL_SIZE: optional(int(1, 1000)).default(10),
  DATABASE_ACQUIRE_TIMEOUT_MS: optional(int(100, 600_000)).default(10_000),
  DATABASE_TIMEOUT_MS: optional(int(100, 60_000)).default(1000),
  REDIS_URL: optional(url(["redis", "rediss"])),
  REDIS_KEY_PREFIX: optional(z.string().regex(/^[!-~]{1,64}$/, "must be 1 to 64 visible ASCII characters")).default(
    "almanac:",
  ),
  REDIS_SENTINELS: optional(sentinelList),
  REDIS_SENTINEL_NAME: optional(z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 of A-Z a-z 0-9 . _ -")),
  TRUST_PROXY: optional(int(0, 10)).default(0),
  FORWARDED_HEADER: optional(z.enum(["x-forwarded-for", "forwarded"])).default("x-forwarded-for"),
  CLIENT_IPV6_PREFIX: optional(int(48, 128)).default(64),
  WEB_CONCURRENCY: optional(int(1, 64)).default(1),
  LOG_LEVEL: optional(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])).default("info"),
  DEMO_HOURLY_LIMIT: optional(int(1, 1_000_000)).default(60),
  ANSWER_CACHE_MB: optional(int(0, 4096)).default(16),
  BODY_LIMIT_BYTES: optional(int(1024, 10_000_000)).default(256 * 1024),
  SHUTDOWN_TIMEOUT_MS: optional(int(100, 120_000)).default(10_000),
  HEADERS_TIMEOUT_MS: optional(int(500, 120_000)).default(5_000),
  REQUEST_TIMEOUT_MS: optional(int(1000, 600_000)).default(15_000),
  KEEP_ALIVE_TIMEOUT_MS: optional(int(100, 120_000)).default(5_000),
  KEY_PERMISSION: optional(z.string().min(1)).default("vibe.classify"),
  UNKEY_ROOT_KEY: optional(z.string().min(1)),
  UNKEY_API_ID: optional(z.string().min(1)),
  UNKEY_BASE_URL: optional(httpUrl).default("https://api.unkey.com"),
  UNKEY_TIMEOUT_MS: optional(int(50, 30_000)).default(1500),
  STRIPE_WEBHOOK_SECRET: optional(z.string().min(1)),
  STRIPE_SECRET_KEY: optional(
    z.string().regex(/^(sk|rk)_[A-Za-z0-9_]+$/, "must be a Stripe secret key (sk_… or rk_…)"),
  ),
  STRIPE_PRICE_PRO: optional(z.string().regex(/^price_[A-Za-z0-9_]+$/, "must be a Stripe price id (price_…)")),
  STRIPE_PRICE_SCALE: optional(z.string().regex(/^price_[A-Za-z0-9_]+$/, "must be a Stripe price id (price_…)")),
  STRIPE_API_BASE: optional(httpUrl).default("https://api.stripe.com"),
  CLASSIFIER_URL: optional(httpUrl),
  CLASSIFIER_TOKEN: optional(z.string().min(1)),
  CLASSIFIER_MODEL: optional(z.enum(["trained", "vader"])).default("trained"),
  MAIL_URL: optional(url(["smtp", "smtps"])),
  MAIL_FROM: optional(z.email()).default("almanac@localhost"),
  CONTACT_TO: optional(z.email()).default("desk@localhost"),
  MAIL_TIMEOUT_MS: optional(int(100, 120_000)).default(10_000),
  CONTACT_HOURLY_LIMIT: optional(int(1, 1_000_000)).default(5),
  CONTACT_DAILY_CAP: optional(int(1, 10_000_000)).default(500),
  CONTACT_OUTBOX_INTERVAL_MS: optional(int(100, 3_600_000)).default(30_000),
  CONTACT_PENDING_GRACE_MS: optional(int(1000, 86_400_000)).default(300_000),
  CONTACT_RETRY_BASE_MS: optional(int(100, 86_400_000)).default(60_000),
  CONTACT_MAX_ATTEMPTS: optional(int(1, 100)).default(8),
  IDEMPOTENCY_LEASE_MS: optional(int(100, 600_000)).default(6000),
  IDEMPOTENCY_WAIT_MS: optional(int(0, 60_000)).default(5000),
  POSTCODES_BASE_URL: optional(httpUrl).default("https://api.postcodes.io"),
  OPEN_METEO_BASE_URL: optional(httpUrl).default("https://api.open-meteo.com"),
  VIES_BASE_URL: optional(httpUrl),
  UPSTREAM_TIMEOUT_MS: optional(int(50, 60_000)).default(3000),
  INVALID_KEY_LIMIT: optional(int(1, 1_000_000)).default(20),
  METRICS_TOKEN: optional(z.string().min(16, "must be at least 16 characters")),
  UPSTREAM_MAX_BYTES: optional(int(1024, 256 * 1024 * 1024)).default(1024 * 1024),
  PUBLIC_URL: optional(httpUrl),
  AUTH_SECRET: optional(z.string().min(32, "must be at least 32 characters")),
  GITHUB_CLIENT_ID: optional(z.string().min(1)),
  GITHUB_CLIENT_SECRET: optional(z.string().min(1)),
  GOOGLE_CLIENT_ID: optional(z.string().min(1)),
  GOOGLE_CLIENT_SECRET: optional(z.string().min(1)),
  OIDC_ISSUER: optional(httpUrl),
  OIDC_CLIENT_ID: optional(z.string().min(1)),
  OIDC_CLIENT_SECRET: optional(z.string().min(1)),
  OIDC_NAME: optional(z.string().min(1)).default("OIDC"),
});

export type Env = z.infer<typeof EnvSchema>;

/** Every variable the configuration reads. */
export const CONFIG_KEYS = Object.keys(EnvSchema.shape) as (keyof Env)[];

export interface Config extends Env {
  /** Absolute data directory. */
  DATA_DIR: string;
  /** External origin, defaulting to http://localhost:$PORT. */
  PUBLIC_URL: string;
  /**
   * Whether PUBLIC_URL was set. Unset, the account pages serve whatever host they were opened on
   * (a same-origin form must match its own Host); set, other hosts are sent to PUBLIC_URL.
   */
  PUBLIC_URL_FIXED: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment once. Every problem is listed, each naming its variable.
 * Pure: reads only `env`; the AUTH_SECRET fallback is resolved by `resolveAuthSecret`.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const cfg = result.data;
  const problems: string[] = [];
  const pairs: [keyof Env, keyof Env][] = [
    ["GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"],
    ["GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"],
    ["OIDC_ISSUER", "OIDC_CLIENT_ID"],
    ["REDIS_SENTINELS", "REDIS_SENTINEL_NAME"],
  ];
  for (const [a, b] of pairs) {
    if (Boolean(cfg[a]) !== Boolean(cfg[b])) problems.push(`${cfg[a] ? b : a}: required when ${cfg[a] ? a : b} is set`);
  }
  // Sentinel names the primary; REDIS_URL then adds only its user, password and database number.
  if (cfg.REDIS_SENTINELS && cfg.REDIS_URL?.startsWith("rediss:")) {
    problems.push("REDIS_URL: rediss:// (TLS) is not supported with REDIS_SENTINELS; use redis://");
  }
  if (problems.length) throw new ConfigError(problems);
  return {
    ...cfg,
    DATA_DIR: resolve(cfg.DATA_DIR),
    PUBLIC_URL: (cfg.PUBLIC_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, ""),
    PUBLIC_URL_FIXED: cfg.PUBLIC_URL !== undefined,
  };
}

/** Where Redis is: REDIS_URL, or the primary the Sentinels name (REDIS_URL then adds credentials and the database). */
export type RedisSettings = Pick<Config, "REDIS_URL" | "REDIS_SENTINELS" | "REDIS_SENTINEL_NAME">;

/** Whether the configuration selects Redis (for limits and caches shared between instances). */
export const usesRedis = (cfg: RedisSettings): boolean => Boolean(cfg.REDIS_URL || cfg.REDIS_SENTINELS);

/** AUTH_SECRET from the environment, else one generated into DATA_DIR on first start. */
export function resolveAuthSecret(cfg: Config): string {
  if (cfg.AUTH_SECRET) return cfg.AUTH_SECRET;
  mkdirSync(cfg.DATA_DIR, { recursive: true, mode: 0o700 });
  const file = join(cfg.DATA_DIR, "auth-secret");
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
  }
  return readFileSync(file, "utf8").trim();
}
