import { noAnswer } from "./errors.js";
import { parseRetryAfter } from "./headers.js";

/** What bounds one call: every attempt, and the retries between them. */
export interface CallLimits {
  /** Retries after a 429/503 with `Retry-After`, or after a failed connection or a timeout. */
  maxRetries: number;
  /** A `Retry-After` longer than this (ms) is not waited for. */
  maxRetryDelayMs: number;
  /** Each attempt, from sending to the last byte of the answer, ends after this many ms. */
  timeoutMs: number;
  /** The caller's signal: aborts the attempt under way, or the wait before the next one, at once. */
  signal?: AbortSignal | undefined;
}

const NULL_BODY = new Set([101, 204, 205, 304]);
const RETRIED_STATUSES = new Set([429, 503]);
/** Backoff after a failed connection: 0.5 s, 1 s, 2 s … up to 8 s, each with up to half of it taken off at random. */
export function backoffMs(retry: number, random = Math.random): number {
  const ceiling = Math.min(8_000, 500 * 2 ** retry);
  return ceiling / 2 + (random() * ceiling) / 2;
}

/** Waits `ms`, or rejects with `aborted` as soon as the signal fires. */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(noAnswer("aborted", "the call was aborted", signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(noAnswer("aborted", "the call was aborted", signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A connection that failed may be tried again only when repeating it cannot do a thing twice. */
const safeToRepeat = (request: Request) =>
  request.method === "GET" || request.method === "HEAD" || request.headers.has("idempotency-key");

/**
 * One attempt: the answer with its body read, within `timeoutMs` and the caller's signal. A
 * read body means a server that sends its headers and then stalls is a timeout too.
 */
async function attempt(
  base: (request: Request) => Promise<Response>,
  request: Request,
  limits: CallLimits,
): Promise<Response> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, limits.timeoutMs);
  const onAbort = () => controller.abort(limits.signal?.reason);
  limits.signal?.addEventListener("abort", onAbort, { once: true });
  // Settles when the attempt is cut short, also with a fetch that does not watch its signal.
  const cut = new Promise<never>((_, reject) =>
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true }),
  );
  cut.catch(() => {});
  try {
    const res = await Promise.race([base(new Request(request, { signal: controller.signal })), cut]);
    const read = res.body === null || NULL_BODY.has(res.status) ? null : res.arrayBuffer();
    const body = read && (await Promise.race([read, cut]));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  } catch (e) {
    if (limits.signal?.aborted) throw noAnswer("aborted", "the call was aborted", limits.signal.reason);
    if (timedOut) throw noAnswer("timeout", `no answer within ${limits.timeoutMs} ms`, e);
    throw noAnswer("network_error", e instanceof Error ? e.message : String(e), e);
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * A fetch that retries within `limits`: a 429 or 503 after its `Retry-After`, and a failed
 * connection or a timeout (GETs, and POSTs carrying an `Idempotency-Key`) after a backoff with
 * jitter. Every attempt sends the same request (the same Idempotency-Key). Rejects with an
 * AlmanacError (`network_error`, `timeout`, `aborted`) when no answer came.
 */
export function retryingFetch(
  base: (request: Request) => Promise<Response>,
  limits: CallLimits,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let retry = 0; ; retry++) {
      if (limits.signal?.aborted) throw noAnswer("aborted", "the call was aborted", limits.signal.reason);
      const last = retry >= limits.maxRetries;
      let res: Response;
      try {
        res = await attempt(base, last ? request : request.clone(), limits);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (last || code === "aborted" || !safeToRepeat(request)) throw e;
        await wait(backoffMs(retry), limits.signal);
        continue;
      }
      if (last || !RETRIED_STATUSES.has(res.status)) return res;
      const seconds = parseRetryAfter(res.headers.get("retry-after"));
      if (seconds === null || seconds * 1000 > limits.maxRetryDelayMs) return res;
      await wait(seconds * 1000, limits.signal);
    }
  };
}
