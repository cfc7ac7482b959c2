import type { Config } from "../../config.js";
import { ApiError } from "../../http/errors.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../../ports/rate-limiter.js";

const HOUR = 3600;
const DAY = 86_400;

export const contactRules = (config: Config) => ({
  perIp: { name: "contact", points: config.CONTACT_HOURLY_LIMIT, durationSec: HOUR } satisfies LimitRule,
  daily: { name: "contact-daily", points: config.CONTACT_DAILY_CAP, durationSec: DAY } satisfies LimitRule,
});

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** IETF RateLimit-Policy / RateLimit headers (draft-ietf-httpapi-ratelimit-headers) for the per-IP limit. */
function rateLimitHeaders(rules: ReturnType<typeof contactRules>, d: LimitDecision): Record<string, string> {
  return {
    "RateLimit-Policy": `"${rules.perIp.name}";q=${rules.perIp.points};w=${rules.perIp.durationSec}, "${rules.daily.name}";q=${rules.daily.points};w=${rules.daily.durationSec}`,
    RateLimit: `"${rules.perIp.name}";r=${d.remaining};t=${seconds(d.resetMs)}`,
  };
}

/**
 * Spends one contact message against the client's hourly limit, then the global daily cap (a
 * refusal by the cap gives the hourly point back).
 * Refused → 429 `rate_limited` (reason CONTACT_HOURLY_LIMIT or CONTACT_DAILY_CAP) with
 * Retry-After. Allowed → the RateLimit headers for the success response.
 */
export async function spendContactLimits(
  limiter: RateLimiter,
  config: Config,
  clientIp: string,
): Promise<Record<string, string>> {
  const rules = contactRules(config);
  const ip = await limiter.consume(rules.perIp, clientIp);
  const headers = rateLimitHeaders(rules, ip);
  if (!ip.allowed) {
    throw new ApiError(
      "rate_limited",
      `Contact limit reached: at most ${rules.perIp.points} messages per hour from one address. Try again later.`,
      { reason: "CONTACT_HOURLY_LIMIT", headers: { ...headers, "Retry-After": String(seconds(ip.resetMs)) } },
    );
  }
  const daily = await limiter.consume(rules.daily, "global");
  if (!daily.allowed) {
    // Not sent, so not the client's: its hourly point goes back (or it would read "N per hour" after one message).
    await limiter.refund(rules.perIp, clientIp);
    const kept = rateLimitHeaders(rules, { ...ip, remaining: Math.min(ip.limit, ip.remaining + 1) });
    throw new ApiError("rate_limited", "The contact desk has reached its daily message cap. Try again tomorrow.", {
      reason: "CONTACT_DAILY_CAP",
      headers: { ...kept, "Retry-After": String(seconds(daily.resetMs)) },
    });
  }
  return headers;
}

/** Gives back what `spendContactLimits` spent, for a message this request did not send after all. */
export async function refundContactLimits(limiter: RateLimiter, config: Config, clientIp: string): Promise<void> {
  const rules = contactRules(config);
  await Promise.all([limiter.refund(rules.perIp, clientIp), limiter.refund(rules.daily, "global")]);
}
