/**
 * Plans: what a self-service key may do. Every new account is on `free`; `pro` and `scale` are
 * granted by the operator (`almanac plans grant`) or by a purchase (`POST /v1/billing/webhook`).
 * The plan's uses and rate limit belong to the account — all its keys together, rolls included
 * (account-quota.ts, pooled.ts); free's to its mailbox (quotaPool) — and apply to classify and to
 * keyed GETs (a key lifts a GET past the demo tier only within its account's plan).
 */
export interface Plan {
  name: PlanName;
  /** Uses per account (classify calls and keyed GETs, all its keys together); null = unlimited. */
  quota: number | null;
  /** Calls per window, per account (all its keys together). */
  ratelimit: { limit: number; durationSec: number };
  /** Keys that are neither revoked nor expired, per account. */
  maxActiveKeys: number;
  /** Keys created per account in any 24 hours (revoked ones included; rolls are not creations). */
  creationsPerDay: number;
}

export const PLAN_NAMES = ["free", "pro", "scale"] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const PLANS: Record<PlanName, Plan> = {
  free: { name: "free", quota: 100, ratelimit: { limit: 10, durationSec: 60 }, maxActiveKeys: 2, creationsPerDay: 3 },
  pro: {
    name: "pro",
    quota: 100_000,
    ratelimit: { limit: 120, durationSec: 60 },
    maxActiveKeys: 10,
    creationsPerDay: 20,
  },
  scale: {
    name: "scale",
    quota: null,
    ratelimit: { limit: 1200, durationSec: 60 },
    maxActiveKeys: 50,
    creationsPerDay: 100,
  },
};

export const DEFAULT_PLAN: PlanName = "free";

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === "string" && (PLAN_NAMES as readonly string[]).includes(value);
}

export const planOf = (name: string | null | undefined): Plan => PLANS[isPlanName(name) ? name : DEFAULT_PLAN];
