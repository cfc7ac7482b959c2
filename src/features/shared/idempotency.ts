import { setTimeout as sleep } from "node:timers/promises";
import type { Context } from "hono";
import type { Config } from "../../config.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { IdempotencyClaim, IdempotencyPrior, IdempotencyRef, IdempotencyStore } from "../../ports/idempotency.js";

export const IDEMPOTENCY_MISMATCH = "Idempotency-Key was already used with a different request body.";
export const IDEMPOTENCY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly.";
export const REQUEST_CUT = "The request was cut before its answer and nothing was kept; retry it.";

/** Longest pause between two looks at a claim another request holds. */
const MAX_POLL_MS = 200;

export interface IdempotencyTiming {
  /** How long a claim is held without renewal (IDEMPOTENCY_LEASE_MS). */
  leaseMs: number;
  /** How long a concurrent duplicate waits for the holder's answer (IDEMPOTENCY_WAIT_MS). */
  waitMs: number;
}

export const idempotencyTiming = (config: Config): IdempotencyTiming => ({
  leaseMs: config.IDEMPOTENCY_LEASE_MS,
  waitMs: config.IDEMPOTENCY_WAIT_MS,
});

export interface IdempotencyClaimSpec extends IdempotencyRef {
  bodyHash: string;
}

/** The answer of a job run once per key: stored (as JSON) for replays. */
export interface OnceAnswer {
  body: object;
  headers?: Record<string, string>;
}

/**
 * Claims the key for this body. While another request holds it, looks again with backoff
 * (10 ms doubling to 200 ms) until its answer is stored, it is released (then this request may
 * own it), its lease runs out (taken over), `waitMs` has passed or `signal` aborts.
 */
export async function claimOrWait(
  store: IdempotencyStore,
  spec: IdempotencyClaimSpec,
  timing: IdempotencyTiming,
  signal?: AbortSignal,
): Promise<IdempotencyClaim> {
  const deadline = Date.now() + timing.waitMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    const claim = await store.claim(spec, spec.bodyHash, timing.leaseMs);
    const left = deadline - Date.now();
    if (claim.kind !== "in_progress" || left <= 0 || signal?.aborted) return claim;
    await sleep(Math.min(delay, left), undefined, { signal }).catch(() => undefined);
  }
}

/** The answer to a request whose key another request holds or held: its stored answer, or a 409. */
export function answerPrior(c: Context<AppEnv>, prior: IdempotencyPrior): Response {
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
 * Rejects when `signal` aborts first (the client went away, or the server is cutting requests
 * at its shutdown deadline); `work` itself is left to finish, its result unused.
 */
export function unlessAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  const cut = () => new ApiError("unavailable", REQUEST_CUT, { headers: { "Retry-After": "1" } });
  if (signal.aborted) return Promise.reject(cut());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cut());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** After a failed job: `release` (a retry runs afresh) or `lapse` (a retry takes over what was done). */
export type AfterFailure = "release" | "lapse";

/**
 * Runs `job` while holding an owned claim, renewing its lease every third of it. A 200 answer is
 * stored for replays (only a success is final). When the job throws, or `signal` aborts first,
 * `undo` runs (e.g. a refund) and says whether the claim is released or lapsed; when `undo`
 * itself fails the claim lapses, so a retry takes it over instead of paying twice.
 */
export async function holding(
  store: IdempotencyStore,
  ref: IdempotencyRef,
  owner: string,
  timing: IdempotencyTiming,
  job: () => Promise<OnceAnswer>,
  opts: { signal?: AbortSignal; undo?: () => Promise<AfterFailure> } = {},
): Promise<OnceAnswer> {
  const renewal = setInterval(
    () => void store.renew(ref, owner, timing.leaseMs).catch(() => undefined),
    Math.max(1, Math.floor(timing.leaseMs / 3)),
  );
  renewal.unref();
  try {
    const answer = await unlessAborted(job(), opts.signal);
    await store.complete(ref, owner, 200, JSON.stringify(answer.body));
    return answer;
  } catch (err) {
    const after = await (opts.undo?.() ?? Promise.resolve<AfterFailure>("release")).catch((): AfterFailure => "lapse");
    await (after === "release" ? store.release(ref, owner) : store.lapse(ref, owner)).catch(() => undefined);
    throw err;
  } finally {
    clearInterval(renewal);
  }
}
