import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppDeps } from "../../app-deps.js";
import { documented } from "../../http/contract.js";
import { bearerToken, keyAuthContract, verifyKey } from "../../http/key-auth.js";
import type { AppEnv } from "../../http/types.js";
import { isPlanName, PLANS } from "./plans.js";

export const UsageResponse = z
  .object({
    key_id: z.string(),
    name: z.string().openapi({ description: "The key's name, as on the account page." }),
    expires_at: z
      .string()
      .nullable()
      .openapi({ description: "When the key stops working (ISO 8601, UTC); null = never." }),
    permissions: z
      .array(z.string())
      .openapi({ description: "What the key may do beyond lookups (`vibe.classify`); empty: lookups only." }),
    plan: z.enum(["free", "pro", "scale"]).nullable().openapi({
      description: "The account's plan for keys made on the account page; null for operator-issued keys.",
    }),
    limits: z
      .object({
        uses: z
          .number()
          .int()
          .nullable()
          .openapi({ description: "Uses per account (all its keys together); null = unlimited." }),
        rate: z.object({ limit: z.number().int(), window_seconds: z.number().int() }),
        max_active_keys: z.number().int(),
        new_keys_per_day: z.number().int(),
      })
      .nullable()
      .openapi({ description: "The plan's limits (null when the key has no plan)." }),
    period: z
      .object({
        start: z.string().nullable().openapi({ description: "When the billing period began (ISO 8601, UTC)." }),
        end: z.string().nullable().openapi({ description: "When it ends: a paid plan's renewal, free's next month." }),
        refill_at: z
          .string()
          .nullable()
          .openapi({
            description:
              "When the uses refill to the plan's (free: the 1st of next month, UTC; a paid plan: its renewal, " +
              "when Stripe confirms the payment); null when nothing refills them (an operator's grant).",
          }),
      })
      .nullable()
      .openapi({ description: "The billing period the account's uses belong to; null for operator-issued keys." }),
    remaining_uses: z.number().int().nullable().openapi({
      description:
        "Uses this key may still spend: its account's uses left, or fewer if the key has a limit of its own; null = unlimited.",
    }),
    rate: z
      .object({ limit: z.number().int(), remaining: z.number().int(), reset_seconds: z.number().int() })
      .nullable()
      .openapi({
        description:
          "The rate-limit window that binds first now (the account's, or the key's own); null when there is none.",
      }),
    requests: z
      .object({ last_24h: z.number().int(), last_30d: z.number().int() })
      .openapi({ description: "Charged calls (classify and keyed GETs) by UTC hour, current hour included." }),
  })
  .openapi("Usage");

export type UsageBody = z.infer<typeof UsageResponse>;

export const USAGE_EXAMPLE: UsageBody = {
  key_id: "key_3ZbTq9v1hHkQ7yWm",
  name: "production server",
  expires_at: "2027-02-23T19:58:00.000Z",
  permissions: ["vibe.classify"],
  plan: "free",
  limits: { uses: 100, rate: { limit: 10, window_seconds: 60 }, max_active_keys: 2, new_keys_per_day: 3 },
  period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z", refill_at: "2026-12-01T00:00:00.000Z" },
  remaining_uses: 97,
  rate: { limit: 10, remaining: 9, reset_seconds: 60 },
  requests: { last_24h: 3, last_30d: 3 },
};

const route = createRoute({
  method: "get",
  path: "/v1/usage",
  tags: ["Keys"],
  summary: "Your key's plan, limits, remaining uses and recent calls (free)",
  description:
    "Answers for the key in `Authorization: Bearer <key>`. Free: it spends no use and is not counted in " +
    "`requests` or against the demo tier (it does count against the key's rate limit). Any valid key may call " +
    "it, whatever its permissions; an exhausted key still can, so quota is visible before and after the first 429. " +
    "Its answers carry the key's `RateLimit` headers as this call spent them.",
  responses: {
    200: {
      description: "The key's usage.",
      headers: {
        "Cache-Control": {
          description: "`no-store`: the figures change with every call.",
          schema: { type: "string", enum: ["no-store"] },
        },
      },
      content: { "application/json": { schema: UsageResponse, example: USAGE_EXAMPLE } },
    },
  },
});

/** `GET /v1/usage` (exempt from the demo tier: see app.ts). */
export function registerUsage(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "keys">): void {
  app.openAPIRegistry.registerPath(route);
  const handler = async (c: Context<AppEnv>) => {
    const token = bearerToken(c.req.header("authorization"));
    let key = await verifyKey(c, deps.keys, token, { cost: 0 });
    const row = await deps.keys.accounts.ledger.byKeyId(key.keyId);
    // A month that is over refills now (as its first charged call would), and is read again.
    if (row && (await deps.keys.accounts.quotas.refillDue(row.pool))) {
      key = await verifyKey(c, deps.keys, token, { cost: 0 });
    }
    const rl = key.ratelimit;
    const [period, counts, owned] = await Promise.all([
      row ? deps.keys.accounts.quotas.period(row.pool) : undefined,
      deps.keys.usage.counts([key.keyId]),
      deps.keys.list(key.ownerId),
    ]);
    const info = owned.find((k) => k.id === key.keyId);
    const plan = isPlanName(row?.plan) ? PLANS[row.plan] : null;
    const usage = counts.get(key.keyId);
    const body: UsageBody = {
      key_id: key.keyId,
      name: info?.name ?? "",
      expires_at: info?.expiresAt ?? null,
      permissions: info?.permissions ?? [],
      plan: plan?.name ?? null,
      limits: plan && {
        uses: plan.quota,
        rate: { limit: plan.ratelimit.limit, window_seconds: plan.ratelimit.durationSec },
        max_active_keys: plan.maxActiveKeys,
        new_keys_per_day: plan.creationsPerDay,
      },
      period:
        plan && period
          ? { start: period.periodStart, end: period.periodEnd, refill_at: period.refillAt ?? renewal(plan, period) }
          : null,
      remaining_uses: key.remaining,
      rate: rl ? { limit: rl.limit, remaining: rl.remaining, reset_seconds: Math.ceil(rl.resetMs / 1000) } : null,
      requests: { last_24h: usage?.last24h ?? 0, last_30d: usage?.last30d ?? 0 },
    };
    c.header("Cache-Control", "no-store");
    return c.json(body, 200);
  };
  // Free (cost 0), so an exhausted key is not refused here.
  app.get(route.path, documented(handler, keyAuthContract({ charged: false })));
}

/** A paid plan's uses refill with its renewal (the period's end), once Stripe confirms the payment. */
const renewal = (plan: { name: string }, p: { periodEnd: string | null }) =>
  plan.name === "free" ? null : p.periodEnd;
