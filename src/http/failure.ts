import type { Context } from "hono";
import type { Logger } from "pino";
import { UpstreamError } from "../ports/upstream-error.js";

/** Why a request failed, as its log line says it (never in the answer). */
export interface FailureCause {
  /** upstream | pool_timeout | query_timeout | sql | connection | reported (a failure told in words) | error | unrecorded */
  kind: string;
  message: string;
  /** upstream: which provider, how it failed (timeout, network, status, …) and its HTTP status. */
  upstream?: string;
  failure?: string;
  status?: number;
  /** sql: the SQLSTATE (PostgreSQL) or SQLITE_* code, and PostgreSQL's class (its first two characters). */
  code?: string;
  sql_class?: string;
}

/** What the request's log line carries under `error`: the code answered, and for a 5xx its cause. */
export interface Failure {
  /** An ErrorCode (http/errors.ts). */
  code: string;
  cause?: FailureCause;
}

const SOCKET_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/;

/** The first recognisable cause in `err`'s chain (at most 6 deep); anything else by name and message. */
export function describeCause(err: unknown): FailureCause | undefined {
  let fallback: FailureCause | undefined;
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    if (typeof e === "string") return fallback ?? { kind: "reported", message: e };
    if (!(e instanceof Error)) break;
    const found = recognise(e);
    if (found) return found;
    if (e instanceof AggregateError) {
      const inner = e.errors.map(describeCause).find((c) => c && c.kind !== "error");
      if (inner) return inner;
    }
    if (e.name !== "ApiError") fallback ??= { kind: "error", message: `${e.name}: ${e.message}` };
    e = e.cause;
  }
  return fallback;
}

function recognise(e: Error): FailureCause | undefined {
  if (e instanceof UpstreamError) {
    return {
      kind: "upstream",
      upstream: e.upstream,
      failure: e.kind,
      ...(e.status !== undefined && { status: e.status }),
      message: e.message,
    };
  }
  const raw = (e as { code?: unknown }).code;
  const code = typeof raw === "string" ? raw : undefined;
  // pg's wait in the pool's queue, and postgres-pool.ts's silence while acquiring or querying.
  if (/^timeout exceeded when trying to connect$|^PostgreSQL has not answered/.test(e.message)) {
    return { kind: "pool_timeout", message: e.message };
  }
  if (/^PostgreSQL did not answer a query/.test(e.message) || e.message === "Query read timeout") {
    return { kind: "query_timeout", message: e.message };
  }
  if (code && /^[0-9A-Z]{5}$/.test(code) && "severity" in e) {
    return { kind: "sql", code, sql_class: code.slice(0, 2), message: e.message };
  }
  if (code?.startsWith("SQLITE_")) return { kind: "sql", code, message: e.message };
  if (code && SOCKET_CODES.test(code)) return { kind: "connection", code, message: e.message };
  if (/^Connection terminated/.test(e.message)) return { kind: "connection", message: e.message };
  return undefined;
}

/**
 * Records what the request's log line says about its failure: the error code, and for a 5xx the
 * cause (`cause`, described; or a plain sentence when nothing was thrown, e.g. no mail lane).
 * The one error renderer calls it; so does a route that answers a 5xx page itself.
 */
export function noteFailure(c: Context, code: string, status: number, cause?: unknown): void {
  const failure: Failure = { code };
  if (status >= 500) failure.cause = describeCause(cause);
  c.set("failure", failure);
}

/**
 * The request-scoped logger: the app's logger with this request's `request_id` on every line,
 * made on first use (most requests log nothing but their one line).
 */
export function requestLog(c: Context): Logger {
  let log = c.get("log") as Logger | undefined;
  if (!log) {
    const base = c.get("baseLogger") as Logger;
    log = base.child({ request_id: c.get("requestId") });
    c.set("log", log);
  }
  return log;
}
