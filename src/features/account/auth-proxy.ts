import type { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError, renderError, toApiError } from "../../http/errors.js";
import { requestLog } from "../../http/failure.js";
import type { AppEnv } from "../../http/types.js";
import { SignInAddress } from "./address.js";
import type { AccountContext } from "./context.js";
import { asApiError, authHeaders } from "./http.js";
import type { SignInAction } from "./sign-in-limits.js";

const SEND_OTP_PATH = "/api/auth/email-otp/send-verification-otp";

/**
 * The better-auth routes the product uses (docs/api.md "Accounts and the account page"), by method and path under
 * /api/auth; everything else better-auth would serve is a 404. `limit` marks the routes that
 * send or check a code, which spend the per-address and per-IP sign-in budgets.
 */
const EXPOSED: { method: string; path: RegExp; limit?: SignInAction; callback?: true; social?: true }[] = [
  { method: "POST", path: /^\/email-otp\/send-verification-otp$/, limit: "send" },
  { method: "POST", path: /^\/sign-in\/email-otp$/, limit: "check" },
  { method: "GET", path: /^\/get-session$/ },
  { method: "POST", path: /^\/sign-out$/ },
  { method: "POST", path: /^\/sign-in\/social$/, social: true },
  { method: "POST", path: /^\/sign-in\/oauth2$/ },
  { method: "GET", path: /^\/callback\/[\w-]+$/, callback: true },
  { method: "GET", path: /^\/oauth2\/callback\/[\w-]+$/, callback: true },
];

/**
 * A code request better-auth would answer 200 without a code being sent: another type than
 * "sign-in" (the sender sends only those; better-auth swallows its refusal), or an address no mail
 * server takes (the lane's refusal would be a 502 for the client's mistake).
 */
function refuseUnsendable(address: string, type: unknown): void {
  if (type !== undefined && type !== "sign-in") throw new ApiError("invalid_body", "Only sign-in codes are sent.");
  if (!SignInAddress.safeParse(address.toLowerCase()).success) {
    throw new ApiError("invalid_body", "Invalid email", { reason: "INVALID_EMAIL" });
  }
}

/**
 * better-auth's sign-in/social also takes an ID token alone (`idToken`, for native apps holding
 * one from a provider's SDK) and signs its subject in: no browser-bound state, no nonce required,
 * good for the token's lifetime. Almanac's sign-in with a provider is the browser round trip, and
 * a token that leaked from anywhere must not open an account.
 */
async function refuseIdToken(req: Request): Promise<void> {
  const body = (await req
    .clone()
    .json()
    .catch(() => null)) as { idToken?: unknown } | null;
  if (body?.idToken !== undefined) {
    throw new ApiError("invalid_body", "Sign-in with an ID token is not offered: sign in through the provider's page.");
  }
}

/** better-auth at /api/auth/*: only the EXPOSED routes, with the sign-in budgets and one error shape. */
export function registerAuthProxy(app: OpenAPIHono<AppEnv>, ctx: AccountContext): void {
  app.on(["GET", "POST"], "/api/auth/*", async (c) => {
    const sub = c.req.path.slice("/api/auth".length);
    const route = EXPOSED.find((r) => r.method === c.req.method && r.path.test(sub));
    if (!route) throw new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`);
    if (!ctx.deps.mail && c.req.path === SEND_OTP_PATH) {
      throw new ApiError("unavailable", "Sign-in is unavailable: no mail lane is configured on this server.");
    }
    if (route.social) await refuseIdToken(c.req.raw);
    let address = "";
    if (route.limit) {
      const body = (await c.req.raw
        .clone()
        .json()
        .catch(() => null)) as { email?: unknown } | null;
      // Without an address better-auth answers 400 itself; the IP budget is spent either way.
      address = typeof body?.email === "string" ? body.email : "";
      if (route.limit === "send" && address) refuseUnsendable(address, (body as { type?: unknown }).type);
      const budget = await ctx.spend(c, route.limit, address);
      if (!budget.allowed) {
        throw new ApiError(
          "rate_limited",
          route.limit === "send"
            ? "Too many sign-in codes requested; retry later."
            : "Too many sign-in code checks; retry later.",
          { reason: "SIGN_IN_LIMIT", headers: { "Retry-After": String(budget.retryAfterSec) } },
        );
      }
    }
    const req = new Request(c.req.raw, { headers: authHeaders(c) });
    const { auth } = await ctx.loadAuth();
    const { result: res, refused, failure } = await ctx.watchingMail(() => auth.handler(req));
    // The database went away under better-auth, which answered 500: 503 with Retry-After instead.
    const outage = res.status >= 500 && failure !== undefined ? toApiError(failure) : undefined;
    if (outage?.code === "unavailable") throw outage;
    if (refused) {
      throw new ApiError("upstream_error", "The sign-in code could not be sent: the mail server refused it.", {
        cause: `mail lane: ${refused}`,
      });
    }
    const error = await asApiError(res);
    if (!error) {
      if (route.limit === "check") res.headers.append("Set-Cookie", ctx.rememberBrowser(c, address));
      return res;
    }
    if (error.code === "internal") requestLog(c).error({ status: res.status, path: c.req.path }, "better-auth failed");
    // A provider's callback is a browser's page load: its failure (an identity linked by another
    // account's callback at that moment, which the unique index refuses) is said on the page.
    if (error.code === "internal" && route.callback) return c.redirect("/account?error=callback_failed", 302);
    const answer = renderError(c, error);
    for (const cookie of res.headers.getSetCookie()) answer.headers.append("Set-Cookie", cookie);
    return answer;
  });
}
