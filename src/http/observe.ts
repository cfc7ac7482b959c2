import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Logger } from "pino";
import type { Metrics } from "../ports/metrics.js";
import { type ClientAddressing, client } from "./client-ip.js";
import { codeForStatus } from "./errors.js";
import type { Failure } from "./failure.js";

/** One structured log line and one metrics observation per request. */
export function observe(logger: Logger, metrics: Metrics, addressing: ClientAddressing): MiddlewareHandler {
  return async (c, next) => {
    const start = performance.now();
    // Logged by address; per-client limits count by clientKey (an IPv6 client's network).
    const { ip, key } = client(c, addressing);
    c.set("clientIp", ip);
    c.set("clientKey", key);
    c.set("baseLogger", logger);
    await next();
    const ms = performance.now() - start;
    // Unmatched paths are one label, so hostile URLs cannot blow up metric cardinality.
    const route = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path ?? "unmatched";
    const status = c.res.status;
    metrics.observeRequest(c.req.method, route, status, ms / 1000);
    const line = {
      request_id: c.get("requestId"),
      method: c.req.method,
      route,
      path: c.req.path,
      status,
      duration_ms: Math.round(ms * 100) / 100,
      ip,
      error: failureOf(c, status),
    };
    if (status >= 500) logger.error(line, "request");
    else logger.info(line, "request");
  };
}

/** The request's failure for its log line: what was noted, else the code of its status (4xx/5xx). */
function failureOf(c: Context, status: number): Failure | undefined {
  const noted = c.get("failure") as Failure | undefined;
  if (noted) return noted;
  if (status < 400) return undefined;
  return {
    code: codeForStatus(status),
    ...(status >= 500 && { cause: { kind: "unrecorded", message: "no cause was recorded" } }),
  };
}
