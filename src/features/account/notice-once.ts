import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { serialize } from "hono/utils/cookie";
import type { AppEnv } from "../../http/types.js";

const COOKIE = "almanac.notice";
const MAX_AGE_SEC = 300;

/**
 * `/account?notice=created` is said once: a redirect there (a form's 303, an identity provider's
 * callback) also sets a short-lived cookie naming the notice, and the page shows the notice only
 * while the cookie names it, deleting it as it does. A reload, a bookmark or a shared link with
 * `?notice=` shows none.
 */
export const markNotice: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const kind = /\/account\?notice=(\w+)/.exec(c.res.headers.get("location") ?? "")?.[1];
  if (!kind || c.res.status < 300 || c.res.status >= 400) return;
  const cookie = serialize(COOKIE, kind, { path: "/account", httpOnly: true, sameSite: "Lax", maxAge: MAX_AGE_SEC });
  try {
    c.res.headers.append("Set-Cookie", cookie);
  } catch {
    // Immutable headers (Response.redirect): copy the answer.
    const res = new Response(c.res.body, c.res);
    res.headers.append("Set-Cookie", cookie);
    c.res = res;
  }
};

/** The `?notice=` kind when it is the one a redirect just marked (and forgets it), else undefined. */
export function takeNotice(c: Context<AppEnv>): string | undefined {
  const kind = c.req.query("notice");
  if (kind === undefined || getCookie(c, COOKIE) !== kind) return undefined;
  setCookie(c, COOKIE, "", { path: "/account", httpOnly: true, sameSite: "Lax", maxAge: 0 });
  return kind;
}
