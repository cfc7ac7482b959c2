import { once } from "node:events";
import pino from "pino";
import { expect } from "vitest";
import { type App, createApp } from "../../src/app.js";
import { type Config, parseConfig } from "../../src/config.js";
import { type AppDeps, buildDeps, closeDeps } from "../../src/deps.js";
import { KeyService } from "../../src/features/keys/index.js";
import type { KeyStore, KeyVerifier } from "../../src/ports/key-store.js";
import type { LimitRule, RateLimiter } from "../../src/ports/rate-limiter.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { freshPostgresUrl, tempDir, withRedisNamespace } from "./env.js";
import { expectErrorShape } from "./error-shape.js";

export interface TestApp {
  app: App;
  deps: AppDeps;
  config: Config;
  close(): Promise<void>;
}

/**
 * The real app on real (embedded) dependencies in a temporary data directory. `env` overrides
 * configuration exactly as environment variables would; `patch` swaps dependencies for fakes.
 */
export async function testApp(
  env: Record<string, string | undefined> = {},
  patch: (deps: AppDeps) => Partial<AppDeps> = () => ({}),
): Promise<TestApp> {
  const config = parseConfig({ DATA_DIR: tempDir(), LOG_LEVEL: "silent", ...withRedisNamespace(env) });
  const logger = pino({ level: config.LOG_LEVEL });
  const built = await buildDeps(config, logger);
  const deps: AppDeps = { ...built, ...patch(built) };
  const app = createApp(deps);
  return { app, deps, config, close: () => closeDeps(deps) };
}

/**
 * `deps`'s key service with its verifications (and refunds) going to `verifier` instead of the
 * composed layers, and its stored keys to `storage`: a fake key store, or one that is down.
 */
export function keysOver(deps: AppDeps, verifier: KeyVerifier, storage: KeyStore = deps.keys.storage): KeyService {
  return new KeyService({ storage, verifier, db: deps.database.db, usage: deps.keys.usage });
}

/**
 * Waits until each app's Redis client is connected: until then its counts go to the in-process
 * fallback limiter and its cache to memory, so a test of what instances share starts here.
 */
export async function redisReady(apps: readonly TestApp[]): Promise<void> {
  for (const { deps } of apps) {
    const redis = deps.redis;
    if (redis && redis.status !== "ready") await once(redis, "ready");
  }
}

/**
 * Two app instances on one fresh PostgreSQL schema (plus whatever `env` shares, e.g. REDIS_URL),
 * handed to `run`; both are closed and the schema dropped afterwards, whatever `run` does.
 */
export async function withTwoInstances(
  env: Record<string, string | undefined>,
  run: (apps: [TestApp, TestApp]) => Promise<void>,
): Promise<void> {
  const pg = await freshPostgresUrl();
  const a = await testApp({ ...env, DATABASE_URL: pg.url });
  const b = await testApp({ ...env, DATABASE_URL: pg.url });
  try {
    await run([a, b]);
  } finally {
    await a.close();
    await b.close();
    await pg.drop();
  }
}

export interface TestServer extends TestApp {
  server: RunningServer;
  url: string;
}

/** The same, listening on a real socket on 127.0.0.1 (port 0). */
export async function testServer(
  env: Record<string, string | undefined> = {},
  patch?: (deps: AppDeps) => Partial<AppDeps>,
): Promise<TestServer> {
  const t = await testApp(env, patch);
  const server = await startServer(t.app, t.deps, { port: 0, host: "127.0.0.1" });
  return {
    ...t,
    server,
    url: `http://127.0.0.1:${server.port}`,
    close: async () => {
      await closeNow(server);
      await t.close();
    },
  };
}

/**
 * Closes a test's server without waiting for the test's own idle keep-alive sockets (fetch's
 * pool) to time out, as a draining server otherwise does (src/http/drain.ts).
 */
export async function closeNow(server: RunningServer): Promise<void> {
  const closed = server.close({ quietMs: 0 });
  server.server.closeIdleConnections();
  await closed;
}

/**
 * Asserts the spec's error shape — exactly one top-level key `error` with a known `code` whose
 * status is the response's, a non-empty `message`, optional `reason`/`details`, and a
 * `request_id` equal to the `X-Request-Id` header — and returns the body for further checks.
 */
export async function errorOf(res: Response) {
  const text = await res.text();
  expectErrorShape(res.status, text, res.headers.get("x-request-id"));
  const body = JSON.parse(text) as {
    error: { code: string; message: string; reason?: string; details?: unknown; request_id: string };
  };
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

/** Asserts a 429 `rate_limited` answer with `reason`, `message` and a positive Retry-After; returns Retry-After. */
export async function expectRateLimited(res: Response, reason: string, message: string): Promise<number> {
  expect(res.status).toBe(429);
  expect((await errorOf(res)).error).toMatchObject({ code: "rate_limited", reason, message });
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThan(0);
  return retryAfter;
}

/** `limiter`, telling `seen` of every decision it is asked for (rule and key) before it decides. */
export function watchedLimiter(limiter: RateLimiter, seen: (rule: LimitRule, key: string) => void): RateLimiter {
  return {
    consume: (rule, key, points) => {
      seen(rule, key);
      return limiter.consume(rule, key, points);
    },
    refund: (rule, key, points) => limiter.refund(rule, key, points),
    reset: (rule, key) => limiter.reset(rule, key),
    ready: () => limiter.ready(),
    close: () => limiter.close(),
  };
}
