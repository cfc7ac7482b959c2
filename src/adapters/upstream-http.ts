import type { Metrics } from "../ports/metrics.js";
import { UpstreamError, type UpstreamFailureKind } from "../ports/upstream-error.js";

export interface UpstreamOptions {
  /** Label in `upstream_errors_total`. */
  name: string;
  baseUrl: string;
  timeoutMs: number;
  /** Largest body read; a longer one is abandoned mid-stream and counted as `too_large`. */
  maxBytes: number;
  metrics: Metrics;
}

/**
 * Whether `res` (fetched with `redirect: "manual"`) is a redirect; if so its body is dropped.
 * Upstreams never get their redirects followed: the request (and its token) goes nowhere else.
 */
export async function refusedRedirect(res: Response): Promise<boolean> {
  if (res.type !== "opaqueredirect" && (res.status < 300 || res.status >= 400)) return false;
  await res.body?.cancel().catch(() => {});
  return true;
}

/** Thrown by readCapped when a body passes its cap. */
export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`body larger than ${maxBytes} bytes`);
    this.name = "BodyTooLarge";
  }
}

/**
 * A response body as text, read chunk by chunk and abandoned (stream cancelled, connection
 * dropped) as soon as it passes `maxBytes`: a hostile or broken upstream can neither fill memory
 * nor hold the request past its deadline (the fetch signal aborts this read too).
 */
export async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new BodyTooLarge(maxBytes);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let total = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
}

export interface UpstreamReply {
  status: number;
  /** The parsed JSON body. */
  body: unknown;
}

/**
 * GET `path` (already encoded, starting with "/") on the configured base URL and read a JSON
 * body. One hard deadline covers connect, headers and body: `opts.timeoutMs` from now, or
 * `deadline` (from `upstreamDeadline`) when several calls make one lookup and share it. A redirect
 * is a failure (never followed), as is a body over `maxBytes` or one that is not JSON. Every
 * failure is counted and thrown as UpstreamError; the HTTP status is left to the caller, which
 * knows which ones are answers.
 */
export async function getJson(
  opts: UpstreamOptions,
  path: string,
  deadline: AbortSignal = upstreamDeadline(opts),
): Promise<UpstreamReply> {
  const fail = (kind: UpstreamFailureKind, message: string, cause?: unknown, status?: number): never => {
    opts.metrics.upstreamError(opts.name, kind);
    throw new UpstreamError(opts.name, kind, message, { cause, status });
  };
  const url = `${opts.baseUrl.replace(/\/+$/, "")}${path}`;
  const signal = deadline;
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: "manual", headers: { accept: "application/json" } });
  } catch (err) {
    return fail(signal.aborted ? "timeout" : "network", "request failed", err);
  }
  if (await refusedRedirect(res)) return fail("redirect", `redirected with ${res.status}`);
  let text: string;
  try {
    text = await readCapped(res, opts.maxBytes);
  } catch (err) {
    if (err instanceof BodyTooLarge) return fail("too_large", err.message);
    return fail(signal.aborted ? "timeout" : "network", "reading the body failed", err);
  }
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch (err) {
    return fail(res.status >= 500 ? "status" : "garbage", `unreadable body with status ${res.status}`, err, res.status);
  }
}

/** The deadline of one lookup against `opts`'s upstream, however many calls it makes. */
export function upstreamDeadline(opts: UpstreamOptions): AbortSignal {
  return AbortSignal.timeout(opts.timeoutMs);
}

/** Counts and throws a failure found by the caller after a successful read (bad status or shape). */
export function upstreamFailure(
  opts: UpstreamOptions,
  kind: UpstreamFailureKind,
  message: string,
  status?: number,
): never {
  opts.metrics.upstreamError(opts.name, kind);
  throw new UpstreamError(opts.name, kind, message, { status });
}
