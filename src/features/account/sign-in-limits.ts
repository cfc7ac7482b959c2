import type { LimitRule, RateLimiter } from "../../ports/rate-limiter.js";

/**
 * Budgets for sign-in codes, per address and per client IP, on every path that sends or checks a
 * code (the account page and better-auth's own JSON routes alike), through the shared limiter so
 * they hold across instances with Redis. Per address: an attacker with many IPs still gets only
 * 5 codes mailed to one victim and 15 guesses an hour at them (each code also dies after 3).
 */
export const SIGN_IN_LIMITS = {
  send: {
    perIp: { name: "signin-ip", points: 20, durationSec: 3600 },
    perAddress: { name: "signin-email", points: 5, durationSec: 3600 },
  },
  check: {
    perIp: { name: "signin-check-ip", points: 60, durationSec: 3600 },
    perAddress: { name: "signin-check-email", points: 15, durationSec: 3600 },
  },
} as const satisfies Record<string, { perIp: LimitRule; perAddress: LimitRule }>;

export type SignInAction = keyof typeof SIGN_IN_LIMITS;

export type SignInBudget = { allowed: true } | { allowed: false; retryAfterSec: number };

/** Spends one `action` from the IP's and then the address's budget. */
export async function spendSignIn(
  limiter: RateLimiter,
  action: SignInAction,
  ip: string,
  address: string,
): Promise<SignInBudget> {
  const rules = SIGN_IN_LIMITS[action];
  for (const [rule, key] of [
    [rules.perIp, ip],
    [rules.perAddress, address.trim().toLowerCase()],
  ] as const) {
    const decision = await limiter.consume(rule, key);
    if (!decision.allowed) return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(decision.resetMs / 1000)) };
  }
  return { allowed: true };
}
