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
  /** The clock that times undoing after a failure (`settle`). */
  now: () => Date;
}

export const idempotencyTiming = (config: Config, now: () => Date): IdempotencyTiming => ({
  leaseMs: config.IDEMPOTENCY_LEASE_MS,
  waitMs: config.IDEMPOTENCY_WAIT_MS,
  now,
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

/** A write that puts things back after a failure; `false`: the claim is not ours any more, stop here. */
export type UndoStep = () => Promise<unknown>;

/** How long undo steps the data tier refused are retried in the background, and how often. */
const SETTLE_FOR_MS = 60_000;
const SETTLE_EVERY_MS = 200;

/**
 * Runs `steps` in order, each until it succeeds, and stops early at one that says `false`. The
 * first try is now; once one fails (the data tier went away mid-request) the rest go on in the
 * background, retried every 200 ms for up to a minute, so a claim is released and a use given
 * back as soon as the data tier answers again, instead of the key staying locked at 409 until its
 * lease runs out. The minute is read on `now`. Resolves when the steps are done or have been left
 * to the background.
 */
export async function settle(steps: UndoStep[], now: () => Date): Promise<void> {
  let i = 0;
  const next = async () => {
    if ((await steps[i]?.()) === false) i = steps.length;
    else i++;
  };
  try {
    while (i < steps.length) await next();
    return;
  } catch {
    // the data tier is away: carry on in the background
  }
  void (async () => {
    const deadline = now().getTime() + SETTLE_FOR_MS;
    while (i < steps.length && now().getTime() < deadline) {
      await sleep(SETTLE_EVERY_MS, undefined, { ref: false });
      try {
        while (i < steps.length) await next();
      } catch {
        // still away: look again
      }
    }
  })();
}

/**
 * Runs `job` while holding an owned claim, renewing its lease every third of it. A 200 answer is
 * stored for replays (only a success is final). When the job throws, its answer cannot be
 * stored, or `signal` aborts first (then the result is the `cut` failure), the `undo` steps run
 * (e.g. a refund), then the claim is released (a retry runs afresh) or lapsed (`after`: a retry
 * takes over what was done), each until it lands (`settle`).
 */
export async function holding(
  store: IdempotencyStore,
  ref: IdempotencyRef,
  owner: string,
  timing: IdempotencyTiming,
  job: () => Promise<OnceAnswer>,
  opts: { signal?: AbortSignal; undo?: UndoStep[]; after?: AfterFailure } = {},
): Promise<Result<OnceAnswer, RequestCut>> {
  const renewal = setInterval(
    () => void store.renew(ref, owner, timing.leaseMs).catch(() => undefined),
    Math.max(1, Math.floor(timing.leaseMs / 3)),
  );
  renewal.unref();
  const giveUp = () =>
    settle([...(opts.undo ?? []), afterFailure(store, ref, owner, opts.after ?? "release")], timing.now);
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

/** The step that leaves the claim as `after` says. */
export const afterFailure =
  (store: IdempotencyStore, ref: IdempotencyRef, owner: string, after: AfterFailure): UndoStep =>
  () =>
    after === "release" ? store.release(ref, owner) : store.lapse(ref, owner);
