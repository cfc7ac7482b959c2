import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../../config.js";
import { fail, ok, type Result } from "../../lib/result.js";
import type { IdempotencyClaim, IdempotencyRef, IdempotencyStore } from "../../ports/idempotency.js";

/** The request was cut (its client went away, or the server's shutdown deadline) before its answer. */
export type RequestCut = { kind: "cut" };

/**
 * Why an idempotent request is not answered by its own job: the key was used with another body,
 * another request still holds it, or this request was cut. idempotency-answers.ts maps each to
 * its HTTP answer.
 */
export type IdempotencyRefusal = { kind: "mismatch" } | { kind: "in_progress" } | RequestCut;

const CUT: RequestCut = { kind: "cut" };

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

/**
 * `work`'s value, or a `cut` failure when `signal` aborts first (the client went away, or the
 * server is cutting requests at its shutdown deadline); `work` itself is left to finish, its
 * result unused. A rejection of `work` before the abort rejects.
 */
export function unlessAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<Result<T, RequestCut>> {
  if (!signal) return work.then(ok);
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(fail(CUT));
  }
  return new Promise<Result<T, RequestCut>>((resolve, reject) => {
    const onAbort = () => resolve(fail(CUT));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then((value) => resolve(ok(value)), reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** After a failed job: `release` (a retry runs afresh) or `lapse` (a retry takes over what was done). */
export type AfterFailure = "release" | "lapse";

/**
 * Runs `job` while holding an owned claim, renewing its lease every third of it. A 200 answer is
 * stored for replays (only a success is final). When the job throws, or `signal` aborts first
 * (then the result is the `cut` failure), `undo` runs (e.g. a refund) and says whether the claim
 * is released or lapsed; when `undo` itself fails the claim lapses, so a retry takes it over
 * instead of paying twice.
 */
export async function holding(
  store: IdempotencyStore,
  ref: IdempotencyRef,
  owner: string,
  timing: IdempotencyTiming,
  job: () => Promise<OnceAnswer>,
  opts: { signal?: AbortSignal; undo?: () => Promise<AfterFailure> } = {},
): Promise<Result<OnceAnswer, RequestCut>> {
  const renewal = setInterval(
    () => void store.renew(ref, owner, timing.leaseMs).catch(() => undefined),
    Math.max(1, Math.floor(timing.leaseMs / 3)),
  );
  renewal.unref();
  const giveUp = async () => {
    const after = await (opts.undo?.() ?? Promise.resolve<AfterFailure>("release")).catch((): AfterFailure => "lapse");
    await (after === "release" ? store.release(ref, owner) : store.lapse(ref, owner)).catch(() => undefined);
  };
  try {
    const outcome = await unlessAborted(job(), opts.signal);
    if (outcome.ok) await store.complete(ref, owner, 200, JSON.stringify(outcome.value.body));
    else await giveUp();
    return outcome;
  } catch (err) {
    await giveUp();
    throw err;
  } finally {
    clearInterval(renewal);
  }
}
