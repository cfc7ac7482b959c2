import { CompiledQuery } from "kysely";

/** What the statement adds to the lookup's columns. */
export interface SpendColumns {
  /** Whether it tried to spend: the key is usable, may spend uses (cost > 0) and has no rate limit of its own. */
  tried: boolean;
  /** The key's own uses (or its roll pair's) were spent; `key_left` is what is left. */
  key_spent: boolean;
  key_left: number | null;
  /** Its account's uses were spent; `account_left` is what is left. */
  account_spent: boolean;
  account_left: number | null;
  /** The whole charge was spent, and recorded on the Idempotency-Key claim named by `$5`–`$7`. */
  claim_charged: boolean;
}

/**
 * The permissions that grant `wanted` (`material.ts` hasPermission): itself, `*`, and each
 * `prefix.*` of it. Null: no permission asked for.
 */
export function grantsOf(wanted: string | undefined): string[] | null {
  if (wanted === undefined) return null;
  const grants = [wanted, "*"];
  for (let i = wanted.indexOf("."); i >= 0; i = wanted.indexOf(".", i + 1)) grants.push(`${wanted.slice(0, i + 1)}*`);
  return grants;
}

/**
 * PostgreSQL: the key lookup (`lookup`, its hash `$1`) and the spends of a charged call in one
 * statement, one round trip. Parameters: `$2` cost, `$3` now (ISO), `$4` the permissions that
 * grant the one asked for (`grantsOf`), `$5`–`$7` the scope, key and owner of the Idempotency-Key
 * claim the call is charged for (null: none). When the key is usable (not revoked, not expired,
 * permitted) and has no rate limit of its own, it spends `cost` from the key's uses (those of
 * the key holding its roll pair's uses) if it has a count, then — only if that spent, or the key
 * has no count — from its account's uses if the account has a count: each a conditional UPDATE
 * (`remaining >= cost`), so never below zero and exact under concurrency. A key with a rate
 * limit of its own is only looked up: its limiter decides before its uses are spent. When every
 * count the call spends was spent (the key's, and its account's pool, opened, unless unlimited),
 * the charge is recorded on the claim in the same statement (`claim_charged`): committed with the
 * spend or not at all, so a retry that takes the claim over after a lost answer does not pay twice.
 *
 * The caller (the embedded store) re-checks the verdict on the row and gives back what was spent
 * for a call it refuses; the account layer (features/keys/pooled.ts) gives the account's back when
 * the account's rate limit refuses the call. SQLite cannot modify in a WITH clause; there the
 * lookup and the same conditional spends are separate statements (in-process, no round trip).
 */
export function lookupAndSpend<R>(lookup: CompiledQuery<R>): CompiledQuery<R & SpendColumns> {
  const text = `with k as (${lookup.sql}),
c as (
  select k.*,
    coalesce(k.quota_of, k.id) as holder,
    case when k.quota_of is null then k.remaining else k.q_remaining end as own_remaining,
    ($2::integer > 0
      and k.revoked_at is null
      and (k.expires_at is null or k.expires_at > $3::text)
      and ($4::text[] is null or k.permissions::jsonb ?| $4::text[])
      and (case when k.quota_of is null then k.ratelimit_limit else k.q_limit end) is null) as tried
  from k
),
ks as (
  update api_keys a
     set remaining = a.remaining - $2::integer,
         last_used_at = case when a.id = c.id then $3::text else a.last_used_at end
    from c
   where c.tried and c.own_remaining is not null and a.id = c.holder
     and (a.remaining is null or a.remaining >= $2::integer)
  returning a.remaining
),
kt as (
  update api_keys a set last_used_at = $3::text
    from c
   where c.quota_of is not null and a.id = c.id and exists (select 1 from ks)
),
acs as (
  update account_quotas a set remaining = a.remaining - $2::integer
    from c
   where c.tried and c.aq_remaining is not null and a.owner_id = c.aq_owner
     and (c.own_remaining is null or exists (select 1 from ks))
     and (a.remaining is null or a.remaining >= $2::integer)
     and (a.refill_at is null or a.refill_at > $3::text)
  returning a.remaining
),
mk as (
  update idempotency i set charged = 1
    from c
   where i.scope = $5::text and i.key = $6::text and i.owner = $7::text and i.status = 0
     and c.tried
     and (c.own_remaining is null or exists (select 1 from ks))
     and (c.l_pool is null or (c.aq_owner is not null and (c.aq_remaining is null or exists (select 1 from acs))))
  returning 1
)
select c.*, exists (select 1 from mk) as claim_charged,
  exists (select 1 from ks) as key_spent, (select remaining from ks) as key_left,
  exists (select 1 from acs) as account_spent, (select remaining from acs) as account_left
from c`;
  return CompiledQuery.raw(text, []) as CompiledQuery<R & SpendColumns>;
}
