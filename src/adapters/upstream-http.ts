import { UpstreamError, type UpstreamFailureKind } from "../ports/upstream-error.js";
import type { Metrics } from "./metrics.js";

export interface UpstreamOptions {
  /** Label in `upstream_errors_total`. */
  name: string;
  baseUrl: string;
  timeoutMs: number;
  metrics: Metrics;
}

export interface UpstreamReply {
  status: number;
  /** The parsed JSON body. */
  body: unknown;
}

/**
 * GET `path` (already encoded, starting with "/") on the configured base URL and read a JSON
 * body. One hard deadline covers connect, headers and body; a redirect is a failure (never
 * followed), as is a body that is not JSON. Every failure is counted and thrown as
 * UpstreamError; the HTTP status is left to the caller, which knows which ones are answers.
 */
export async function getJson(opts: UpstreamOptions, path: string): Promise<UpstreamReply> {
  const fail = (kind: UpstreamFailureKind, message: string, cause?: unknown): never => {
    opts.metrics.upstreamError(opts.name, kind);
    throw new UpstreamError(opts.name, kind, message, { cause });
  };
  const url = `${opts.baseUrl.replace(/\/+$/, "")}${path}`;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: "manual", headers: { accept: "application/json" } });
  } catch (err) {
    return fail(signal.aborted ? "timeout" : "network", "request failed", err);
  }
  if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
    await res.body?.cancel().catch(() => {});
    return fail("redirect", `redirected with ${res.status}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    return fail(signal.aborted ? "timeout" : "network", "reading the body failed", err);
  }
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch (err) {
    return fail(res.status >= 500 ? "status" : "garbage", `unreadable body with status ${res.status}`, err);
  }
}

/** Counts and throws a failure found by the caller after a successful read (bad status or shape). */
export function upstreamFailure(opts: UpstreamOptions, kind: UpstreamFailureKind, message: string): never {
  opts.metrics.upstreamError(opts.name, kind);
  throw new UpstreamError(opts.name, kind, message);
}
