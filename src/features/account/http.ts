import type { Context, MiddlewareHandler } from "hono";
import { ApiError, codeForStatus } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { CLIENT_IP_HEADER } from "./policy.js";

/** Headers for better-auth server calls: the browser's, plus our resolved client IP (never the client's). */
export function authHeaders(c: Context<AppEnv>): Headers {
  const h = new Headers(c.req.raw.headers);
  h.set(CLIENT_IP_HEADER, c.get("clientIp") ?? "unknown");
  return h;
}

/** Copies better-auth's Set-Cookie headers (session, OAuth state) onto our response. */
export function withCookies(res: Response, from: Headers | undefined): Response {
  for (const cookie of from?.getSetCookie() ?? []) res.headers.append("Set-Cookie", cookie);
  return res;
}

export function seeOther(location: string, cookies?: Headers): Response {
  return withCookies(new Response(null, { status: 303, headers: { Location: location } }), cookies);
}

/**
 * A browser on the account pages never sees JSON: an error answered there (stale session, CSRF,
 * unknown path, 405, 413, 429…) becomes an HTML page with the message, the wait time and a way
 * back, when the request accepts text/html. API clients (Accept: application/json) keep the
 * JSON error shape.
 */
export function htmlErrors(
  page: (p: { status: number; message: string; requestId: string; retryAfterSec?: number }) => unknown,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !res.headers.get("content-type")?.includes("application/json")) return;
    const accept = c.req.header("accept") ?? "";
    if (!accept.includes("text/html")) return;
    let message = "Something went wrong.";
    try {
      const body = (await res.clone().json()) as { error?: { message?: unknown } };
      if (typeof body.error?.message === "string") message = body.error.message;
    } catch {
      // keep the generic text
    }
    const retry = Number(res.headers.get("retry-after"));
    const html = await c.html(
      page({
        status: res.status,
        message,
        requestId: c.get("requestId"),
        ...(Number.isFinite(retry) && retry > 0 && { retryAfterSec: retry }),
      }) as string,
      res.status as 400,
    );
    for (const [k, v] of res.headers) {
      if (k === "set-cookie") html.headers.append(k, v);
      else if (k !== "content-type" && k !== "content-length") html.headers.set(k, v);
    }
    c.res = html;
  };
}

/**
 * Page hardening: no inline script or style can run, nothing frames the page, nothing is cached
 * (a freshly created key is in the HTML). No `form-action`: linking redirects to the provider.
 */
export function pageHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const h = c.res.headers;
    h.set(
      "Content-Security-Policy",
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    h.set("X-Frame-Options", "DENY");
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "same-origin");
    if (!c.req.path.startsWith("/account/assets/")) h.set("Cache-Control", "no-store");
  };
}

/**
 * The request's form fields. Hono's parser throws on a malformed multipart or urlencoded body
 * (missing or wrong boundary, truncated parts): that is the client's mistake, a 400, not a 500.
 */
export async function formBody(c: Context): Promise<Record<string, unknown>> {
  try {
    return await c.req.parseBody();
  } catch (cause) {
    throw new ApiError(
      "invalid_body",
      "Request body must be a well-formed form (application/x-www-form-urlencoded or multipart/form-data).",
      { cause },
    );
  }
}

/** A form field as a string ("" when absent or a file). */
export function field(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  return typeof v === "string" ? v : "";
}

/**
 * better-auth answers its errors as `{message, code}`; the API has one error shape. Its
 * non-2xx, non-redirect answers become an ApiError (its code as `reason`), keeping its headers.
 */
export async function asApiError(res: Response): Promise<ApiError | null> {
  if (res.status < 400) return null;
  let body: { message?: unknown; code?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not JSON: the status alone decides
  }
  const code = codeForStatus(res.status);
  const message =
    code !== "internal" && typeof body?.message === "string"
      ? body.message
      : `Sign-in request failed (HTTP ${res.status}).`;
  const headers = Object.fromEntries(
    [...res.headers].filter(([k]) => !["content-type", "content-length", "set-cookie"].includes(k)),
  );
  return new ApiError(code, message, {
    ...(code !== "internal" && typeof body?.code === "string" && { reason: body.code }),
    headers,
  });
}
