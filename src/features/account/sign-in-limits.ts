import type { LimitRule, RateLimiter } from "../../ports/rate-limiter.js";
import { OTP_ALLOWED_ATTEMPTS, OTP_EXPIRES_SEC } from "./policy.js";

/** Tries at the current sign-in code of one address (reset when a new code is asked for; see auth.ts). */
export const SIGN_IN_CODE_TRIES: LimitRule = {
  name: "signin-code",
  points: OTP_ALLOWED_ATTEMPTS,
  durationSec: OTP_EXPIRES_SEC,
};

/**
 * Budgets for sign-in codes, per address and per client IP, on every path that sends or checks a
 * code (the account page and better-auth's own JSON routes alike), through the shared limiter so
 * they hold across instances with Redis. Per address: an attacker with many IPs still gets only
 * 5 codes mailed to one victim and 15 guesses an hour at them (each code also dies after 3).
 *
 * Anyone can spend an address's budget and so lock its owner out for the hour. A browser that
 * completed a sign-in for the address before (known-browser.ts) therefore keeps a reserve of its
 * own once that budget is spent: 3 codes and 9 checks an hour, shared by the owner's known
 * browsers and out of reach of everyone else.
 */
export const SIGN_IN_LIMITS = {
  send: {
    perIp: { name: "signin-ip", points: 20, durationSec: 3600 },
    perAddress: { name: "signin-email", points: 5, durationSec: 3600 },
    knownBrowser: { name: "signin-email-known", points: 3, durationSec: 3600 },
  },
  check: {
    perIp: { name: "signin-check-ip", points: 60, durationSec: 3600 },
    perAddress: { name: "signin-check-email", points: 15, durationSec: 3600 },
    knownBrowser: { name: "signin-check-email-known", points: 9, durationSec: 3600 },
  },
} as const satisfies Record<string, { perIp: LimitRule; perAddress: LimitRule; knownBrowser: LimitRule }>;

export type SignInAction = keyof typeof SIGN_IN_LIMITS;

/**
 * Starts of a provider sign-in or link on the page, per client IP. Each writes an OAuth state row;
 * the page calls better-auth in process, past the window its own route has, so this bounds them.
 */
export const PROVIDER_STARTS: LimitRule = { name: "signin-provider-ip", points: 10, durationSec: 60 };

export type SignInBudget = { allowed: true } | { allowed: false; retryAfterSec: number };

/** The form of an address that budgets and known-browser tags are keyed on. */
export const normaliseAddress = (address: string): string => address.trim().toLowerCase();

/**
 * Spends one `action` from the IP's and then the address's budget; when the address's is spent
 * and the browser is `known` for it, from the address's known-browser reserve instead.
 */
export async function spendSignIn(
  limiter: RateLimiter,
  action: SignInAction,
  ip: string,
  address: string,
  known = false,
): Promise<SignInBudget> {
  const rules = SIGN_IN_LIMITS[action];
  const refused = (d: { resetMs: number }) => ({
    allowed: false as const,
    retryAfterSec: Math.max(1, Math.ceil(d.resetMs / 1000)),
  });
  const byIp = await limiter.consume(rules.perIp, ip);
  if (!byIp.allowed) return refused(byIp);
  const key = normaliseAddress(address);
  const byAddress = await limiter.consume(rules.perAddress, key);
  if (byAddress.allowed) return { allowed: true };
  if (!known) return refused(byAddress);
  const reserve = await limiter.consume(rules.knownBrowser, key);
  return reserve.allowed ? { allowed: true } : refused(reserve);
}
