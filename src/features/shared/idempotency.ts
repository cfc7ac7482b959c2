import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { IdempotencyBegin, IdempotencyStore } from "../../ports/idempotency.js";

export const IDEMPOTENCY_MISMATCH = "Idempotency-Key was already used with a different request body.";
export const IDEMPOTENCY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly.";

/** The answer to a request whose key was claimed before: the stored answer, or a 409. */
export function answerPrior(c: Context<AppEnv>, prior: Exclude<IdempotencyBegin, { kind: "new" }>): Response {
  if (prior.kind === "mismatch") throw new ApiError("conflict", IDEMPOTENCY_MISMATCH);
  if (prior.kind === "in_progress") {
    throw new ApiError("conflict", IDEMPOTENCY_IN_PROGRESS, { headers: { "Retry-After": "1" } });
  }
  return c.body(prior.body, prior.status as 200, {
    "Content-Type": "application/json",
    "Idempotent-Replayed": "true",
  });
}

/**
 * The one idempotency flow (classify and the contact desk): claim `key` for this body, run once,
 * store the 200 answer for replays; when `run` throws, release the key so a retry can run again
 * (only a success is final). A repeat gets the stored answer, another body or a concurrent
 * request a 409.
 */
export async function once(
  c: Context<AppEnv>,
  store: IdempotencyStore,
  claim: { scope: string; key: string; bodyHash: string },
  run: () => Promise<{ body: object; headers?: Record<string, string> }>,
): Promise<Response> {
  const begun = await store.begin(claim.scope, claim.key, claim.bodyHash);
  if (begun.kind !== "new") return answerPrior(c, begun);
  try {
    const { body, headers } = await run();
    await store.complete(claim.scope, claim.key, 200, JSON.stringify(body));
    return c.json(body, 200, headers);
  } catch (err) {
    await store.abandon(claim.scope, claim.key).catch(() => undefined);
    throw err;
  }
}
