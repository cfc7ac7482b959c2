import type { ColumnType, Generated } from "kysely";

/**
 * Tables of the project's own database (better-auth's tables are created by better-auth
 * itself; see features/account). Timestamps are ISO 8601 UTC text and booleans 0/1 integers,
 * so one set of migrations and queries runs unchanged on SQLite and PostgreSQL.
 */
export interface DB {
  almanac_meta: {
    key: string;
    value: string;
    updated_at: string;
  };
  idempotency: {
    scope: string;
    key: string;
    body_hash: string;
    /** 0 while the first request is still running. */
    status: number;
    response: string | null;
    created_at: string;
    /** Random id of the request holding the claim (null on rows from before leases). */
    owner: string | null;
    /** ISO time the holder's lease ends; null once complete (or on rows from before leases). */
    lease_until: string | null;
    /** 1 while the claim holds a charge for its call (classify: the key's use), else 0. */
    charged: Generated<number>;
  };
  /** API keys of the embedded key store (features/vibe, adapters/keys/embedded.ts). */
  api_keys: {
    id: string;
    /** SHA-256 hex of the plaintext key: the only form of the key that is stored. */
    key_hash: string;
    /** `alm_` + the first characters, and the last four: for display only. */
    start: string;
    last4: string;
    name: string;
    owner_id: string | null;
    /** JSON array of permission names. */
    permissions: string;
    expires_at: string | null;
    /** Uses left; null = unlimited. Never below zero. */
    remaining: number | null;
    ratelimit_limit: number | null;
    ratelimit_duration_sec: number | null;
    revoked_at: string | null;
    last_used_at: string | null;
    created_at: string;
    /** The key this one replaced in a roll (old → new). */
    replaces: string | null;
    /** The key whose uses and rate limit this one spends (the first key of its rolls); null = its own. */
    quota_of: string | null;
    /** When this key was rolled (a key rolls once). */
    rolled_at: string | null;
    /** When its uses were last set (`keys update --remaining`): calls charged before get no refund. */
    uses_set_at: string | null;
  };
  /** Contact desk messages (features/contact): stored before the send, then marked. */
  contact_messages: {
    id: string;
    name: string;
    email: string;
    subject: string | null;
    message: string;
    client_ip: string | null;
    /**
     * What the client was counted by (http/client-ip.ts: the IPv4 address or the IPv6 network):
     * its Idempotency-Key is its own. NULL on rows stored before keys were per client.
     */
    client_key: string | null;
    /** The request's Idempotency-Key, so a client retry after a failed send resends this row. */
    idempotency_key: string | null;
    /** pending (stored; send in progress or interrupted), sent, failed. */
    status: string;
    attempts: number;
    last_error: string | null;
    /** The SMTP Message-ID of the successful send. */
    message_id: string | null;
    created_at: string;
    updated_at: string;
    sent_at: string | null;
  };
  /** Plan per account e-mail (lower case), granted by the operator CLI or a purchase webhook. */
  account_plans: {
    email: string;
    plan: string;
    /** `cli`, `stripe`. */
    source: string;
    /** The Checkout session or operator note behind the grant. */
    reference: string | null;
    updated_at: string;
    /** When Stripe made the latest purchase applied (its event's `created`, ISO); null: none yet. */
    purchased_at: string | null;
  };
  /** One row per account that created a key: the row the key-cap transaction locks. */
  key_owners: {
    owner_id: string;
    touched_at: string;
  };
  /** Keys made on the account page, whatever the key store: caps, unique names, rolls, plan. */
  key_ledger: {
    id: string;
    /** The store's key id; null while the creation is in flight. */
    key_id: string | null;
    owner_id: string;
    name: string;
    plan: string;
    created_at: string;
    expires_at: string | null;
    revoked_at: string | null;
    rolled_at: string | null;
    /** Why the account page revoked it: `plan` (over a lower plan's cap after a downgrade), or null. */
    revoked_reason: string | null;
    /**
     * The row of `account_quotas` the key spends (features/keys/account-quota.ts quotaPool): its
     * account's id on a paid plan, `mailbox:` and its mailbox on the free plan.
     */
    pool: string;
  };
  /**
   * Uses left per pool (all the account-page keys that spend it together); null = unlimited. The
   * pool (`owner_id`) is an account on a paid plan, a mailbox (`mailbox:x@example.com`) on the free one.
   */
  account_quotas: {
    owner_id: string;
    remaining: number | null;
    updated_at: string;
    /** The billing period the uses belong to (null: none, an operator's grant). */
    period_start: string | null;
    period_end: string | null;
    /**
     * When the uses refill themselves (free: the next calendar month, UTC); null: only a plan
     * change or a paid renewal refills them. Uses of a row past it are never spent: it refills first.
     */
    refill_at: string | null;
  };
  /** Charged calls per key per UTC hour (`2026-11-22T23`); rows older than 31 days are pruned. */
  key_usage: {
    key_id: string;
    hour: string;
    /** Charged (allowed) calls. */
    count: number;
    /** Calls the key store refused (no permission, used up, rate-limited, expired, revoked). */
    refused: ColumnType<number, number | undefined, number>;
  };
  /** Key expiry reminders claimed (and sent, unless the lane refused and the claim was given back). */
  key_expiry_reminders: {
    key_id: string;
    expires_at: string;
    claimed_at: string;
  };
  /** Purchase webhook events already applied (Stripe retries deliveries). */
  billing_events: {
    id: string;
    type: string;
    received_at: string;
  };
  /** The last keyed calls of each account (at most CALL_LOG_LIMIT, 30 days): features/keys/activity-log.ts. */
  call_log: {
    id: string;
    owner_id: string;
    key_id: string;
    at: string;
    method: string;
    path: string;
    status: number;
    /** The answer's `error.code`; null for a success. */
    error_code: string | null;
    request_id: string;
  };
  /** Key events of each account: created, edited, rolled, revoked, plan changes (features/keys/activity-log.ts). */
  audit_log: {
    id: string;
    owner_id: string;
    at: string;
    event: string;
    key_id: string | null;
    detail: string | null;
  };
  /** An account's Stripe subscription, as its signed events left it (features/billing). */
  billing_subscriptions: {
    /** The account (better-auth user id): the Checkout Session's `client_reference_id`. */
    account_id: string;
    email: string;
    customer_id: string | null;
    subscription_id: string | null;
    /** The paid plan the subscription is for (`pro`, `scale`). */
    plan: string;
    /** Stripe's subscription status (`active`, `past_due`, `canceled`, …). */
    status: string;
    period_start: string | null;
    /** When the period ends: the renewal, or the end of a cancelled plan. */
    period_end: string | null;
    /** 1: cancelled, the plan ends at `period_end`. */
    cancel_at_period_end: number;
    /** A downgrade that starts with the next period. */
    next_plan: string | null;
    /** The last renewal's payment failed (Stripe retries); null once paid. */
    payment_failed_at: string | null;
    last_payment_amount: number | null;
    last_payment_currency: string | null;
    last_payment_at: string | null;
    /** The Checkout Session that started it (the page waits for it after Checkout). */
    checkout_session: string | null;
    /** `created` (Unix seconds) of the newest event applied to the subscription's state. */
    state_at: number;
    updated_at: string;
  };
}
