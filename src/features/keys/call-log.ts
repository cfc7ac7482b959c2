import type { Context, MiddlewareHandler, Next } from "hono";
import { codeForStatus } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { ActivityLogPort } from "../../ports/activity-log.js";

/**
 * Records every call made with an account's key (once verified to one: its answer may still be a
 * refusal, 429 or 403) in the account's call log, after the answer: time, key, method and path,
 * status, `error.code` and the request id. Only appends to the log's in-memory list.
 */
export function recordKeyedCalls(log: Pick<ActivityLogPort, "recordCall">, now: () => Date): MiddlewareHandler<AppEnv> {
  const record = async (c: Context<AppEnv>, next: Next) => {
    await next();
    const key = c.get("calledKey");
    if (!key) return;
    const status = c.res.status;
    log.recordCall({
      ownerId: key.ownerId,
      keyId: key.keyId,
      at: now().toISOString(),
      method: c.req.method,
      path: c.req.path,
      status,
      errorCode: status >= 400 ? (c.get("failure")?.code ?? codeForStatus(status)) : null,
      requestId: c.get("requestId"),
    });
  };
  // A key is only ever verified from an `Authorization` header (key-auth.ts): a call without one
  // is not waited for (every anonymous /v1 call passes here).
  return (c, next) => (c.req.header("authorization") === undefined ? next() : record(c, next));
}
