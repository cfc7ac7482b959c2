import type { Context, MiddlewareHandler, Next } from "hono";
import type { KeyVerifier } from "../ports/key-store.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../ports/rate-limiter.js";
import {
  type Contract,
  type Documented,
  documented,
  errorAnswer,
  type HeaderDoc,
  retryAfterHeader,
} from "./contract.js";
import { ApiError } from "./errors.js";
import { bearerToken, KEY_ANSWERS, verifyKey } from "./key-auth.js";
import { ratePolicy, rateState } from "./rate-limit-headers.js";
import type { AppEnv } from "./types.js";

export const DEMO_TIER_REASON = "DEMO_HOURLY_LIMIT";
const WINDOW_SEC = 3600;

export interface DemoTierOptions {
  limiter: RateLimiter;
  /**
   * DEMO_HOURLY_LIMIT calls per hour per client (`demoRule`): the envelope's own, so the RateLimit
   * headers it writes describe the rule that decided.
   */
  rule: LimitRule;
  /** Verifies keys sent on GETs; unset: every GET is served under the demo tier. */
  keys?: KeyVerifier;
}

/**
 * Paths under /v1 the demo tier never counts: the API description, and /v1/usage, which
 * verifies its own key without spending a use.
 */
const EXEMPT = ["/v1/openapi.json", "/v1/usage"];

/** Whether `target` (a path, with or without its query string) is `path`. */
const isPath = (target: string, path: string) =>
  target.startsWith(path) && (target.length === path.length || target[path.length] === "?");

/** Whether `target` (a path, with or without its query string) is under /v1. */
const underV1 = (target: string) =>
  target.startsWith("/v1") && (target.length === 3 || "/?".includes(target[3] as string));

/**
 * Which requests the demo tier stands in front of, decided here only (the app's middleware, its
 * document and the hot lane ask this): every GET or HEAD under /v1 but the exempt paths. Without
 * an `Authorization` header it is `anonymous` and counts against the tier; with one it is
 * `keyed`, verified instead (and counted only when the verifier is down); anything else is `none`.
 * `target` is the path, with or without its query string (read without copying it).
 */
export function demoTierCall(
  method: string,
  target: string,
  authorization: string | undefined,
): "none" | "anonymous" | "keyed" {
  if ((method !== "GET" && method !== "HEAD") || !underV1(target)) return "none";
  for (const path of EXEMPT) if (isPath(target, path)) return "none";
  return authorization === undefined ? "anonymous" : "keyed";
}

export const demoRule = (hourlyLimit: number): LimitRule => ({
  name: "demo",
  points: hourlyLimit,
  durationSec: WINDOW_SEC,
});

const demoMessage = (rule: LimitRule) =>
  `Demo tier limit of ${rule.points} calls per hour reached; retry later or send an API key.`;

/**
 * What the demo tier adds to the document of every operation it stands in front of: its decision's
 * RateLimit headers (which the envelope writes) on whatever passes it, its 401 for a rejected key
 * and its 429s, and that a call may be anonymous or keyed.
 */
function demoContract(rule: LimitRule): Contract {
  const headers: Record<string, HeaderDoc> = {
    "RateLimit-Policy": {
      description:
        `Demo-tier policy: \`${ratePolicy(rule)}\` (${rule.points} calls per ${rule.durationSec} s per client IP). ` +
        "With a key, the key's (`key`) or its account's (`account`) rate limit instead, when it has one.",
      schema: { type: "string", maxLength: 128, example: ratePolicy(rule) },
    },
    RateLimit: {
      description: "Calls left (`r`) and seconds until the window resets (`t`).",
      schema: {
        type: "string",
        maxLength: 128,
        example: rateState(rule, { remaining: rule.points - 1, resetMs: rule.durationSec * 1000 }),
      },
    },
  };
  const { missing, rejected, rateLimited, usageExceeded } = KEY_ANSWERS;
  const demo = { code: "rate_limited", message: demoMessage(rule), reason: DEMO_TIER_REASON };
  return {
    applies: (op) => demoTierCall(op.method, op.path, undefined) !== "none",
    // Anonymous (counted here) or with a key (verified here, not counted).
    security: [{}, { bearer: [] }],
    stamps: [{ headers }],
    answers: {
      "401": errorAnswer("An `Authorization` header was sent and the key was rejected (no header: demo tier).", {
        malformed: missing,
        rejected,
      }),
      "429": errorAnswer(
        `Demo-tier limit reached (${rule.points} calls per hour per client IP across all /v1 GET routes), or the key sent has reached its rate limit or has no uses left.`,
        { demo, rateLimited, usageExceeded },
        { ...headers, "Retry-After": retryAfterHeader("Seconds until the window resets.") },
      ),
    },
  };
}

/**
 * The demo tier (docs/api.md "Demo tier"): every request `demoTierCall` names counts against a per-IP
 * hourly budget shared through the limiter (Redis when configured). A GET that sends an
 * `Authorization` header is verified instead: a valid key is not counted (it spends a use of
 * the key, given back when the answer is an error; the answer carries the key's own RateLimit headers
 * when it has a rate limit), a rejected one gets the key's 401/403/429, and when the verifier is down the call falls back to the demo tier
 * (docs/api.md "Demo tier"). The decision is kept on the request's exchange, from which the envelope
 * (envelope.ts) puts `RateLimit-Policy` and `RateLimit` on the answer, whatever it is; a
 * decision the hot lane already took (it hands a refusal on to the app) is not taken again.
 */
export function demoTier(opts: DemoTierOptions): Documented<MiddlewareHandler<AppEnv>> {
  const { rule } = opts;

  /** Counts the call against the client's demo budget (once: the hot lane may have) and lets it on or refuses it. */
  const demo = (c: Context<AppEnv>, next: Next): Promise<void> => {
    const ex = c.get("exchange");
    if (ex.rate) return decide(ex.rate, next);
    return opts.limiter.consume(rule, ex.key).then((d) => {
      ex.rate ??= d;
      return decide(ex.rate, next);
    });
  };
  const decide = (decision: LimitDecision, next: Next): Promise<void> => {
    if (!decision.allowed) {
      throw new ApiError("rate_limited", demoMessage(rule), {
        reason: DEMO_TIER_REASON,
        headers: { "Retry-After": String(Math.max(1, Math.ceil(decision.resetMs / 1000))) },
      });
    }
    return next();
  };
  /** A GET with a key: verified instead of counted, unless the verifier is down (then `demo`). */
  const keyed = async (c: Context<AppEnv>, next: Next, keys: KeyVerifier, authorization: string): Promise<void> => {
    const token = bearerToken(authorization);
    // verifyKey puts the key's (or its account's) RateLimit headers on the answer, its 429 included.
    const key = await verifyKey(c, keys, token, { cost: 1 }).catch((err: unknown) => {
      if (!(err instanceof ApiError) || err.code !== "unkey_unavailable") throw err;
      return undefined;
    });
    if (!key) return demo(c, next);
    await next();
    // The use pays for an answer: a request refused or failed (4xx, 5xx: 405, unknown path, bad query, 502) gets it back.
    if (c.res.status >= 400) await keys.refund(key.keyId, 1, key).catch(() => undefined);
  };

  // Not async on the way of an anonymous call: every /v1 GET passes here.
  return documented<MiddlewareHandler<AppEnv>>((c, next) => {
    const authorization = c.req.header("authorization");
    const call = demoTierCall(c.req.method, c.req.path, authorization);
    if (call === "none") return next();
    if (call === "keyed" && authorization !== undefined && opts.keys) return keyed(c, next, opts.keys, authorization);
    return demo(c, next);
  }, demoContract(rule));
}
