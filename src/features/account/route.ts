import { AsyncLocalStorage } from "node:async_hooks";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppDeps } from "../../deps.js";
import { ApiError, renderError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { registerAccountActions } from "./actions.js";
import { ACCOUNT_CSS, ACCOUNT_JS } from "./assets.js";
import type { Auth, MailOutcome } from "./auth.js";
import { isSameOriginRequest } from "./csrf.js";
import { asApiError, authHeaders, field, formBody, pageHeaders } from "./http.js";
import { isKnownBrowser, knownBrowserCookie } from "./known-browser.js";
import { markNotice } from "./notice-once.js";
import { cookiePolicy, OTP_ALLOWED_ATTEMPTS } from "./policy.js";
import { clearPendingSignIn, readPendingSignIn, setPendingSignIn } from "./sign-in-flow.js";
import { type SignInAction, spendSignIn } from "./sign-in-limits.js";
import { type Notice, SignInPage, type SignInStep } from "./views.jsx";

const Email = z.email().max(254);
const SEND_OTP_PATH = "/api/auth/email-otp/send-verification-otp";

/**
 * The better-auth routes the product uses (README "Accounts"), by method and path under
 * /api/auth; everything else better-auth would serve is a 404. `limit` marks the routes that
 * send or check a code, which spend the per-address and per-IP sign-in budgets.
 */
const EXPOSED: { method: string; path: RegExp; limit?: SignInAction }[] = [
  { method: "POST", path: /^\/email-otp\/send-verification-otp$/, limit: "send" },
  { method: "POST", path: /^\/sign-in\/email-otp$/, limit: "check" },
  { method: "GET", path: /^\/get-session$/ },
  { method: "POST", path: /^\/sign-out$/ },
  { method: "POST", path: /^\/sign-in\/social$/ },
  { method: "POST", path: /^\/sign-in\/oauth2$/ },
  { method: "GET", path: /^\/callback\/[\w-]+$/ },
  { method: "GET", path: /^\/oauth2\/callback\/[\w-]+$/ },
];

type AuthModule = typeof import("./auth.js");

/** better-auth, loaded on first use (see registerAccount). */
export interface LoadedAuth {
  auth: Auth;
  isAPIError: AuthModule["isAPIError"];
}

export interface AccountContext {
  deps: AppDeps;
  loadAuth: () => Promise<LoadedAuth>;
  secret: string;
  publicOrigin: string;
  /** PUBLIC_URL was set: its origin is the only one the pages serve (see pageOrigin). */
  originFixed: boolean;
}

/**
 * The origin the account pages answer as: PUBLIC_URL's when it is set, else the request's own
 * (Host and scheme), so a sign-in opened on http://127.0.0.1:8080 works without configuration.
 */
export function pageOrigin(c: Context<AppEnv>, ctx: Pick<AccountContext, "publicOrigin" | "originFixed">): string {
  return ctx.originFixed ? ctx.publicOrigin : new URL(c.req.url).origin;
}

/** Rejects anything but a same-origin browser POST: 403, nothing changes. */
export function requireSameOrigin(c: Context<AppEnv>, ctx: Pick<AccountContext, "publicOrigin" | "originFixed">): void {
  if (!isSameOriginRequest(c.req.raw.headers, pageOrigin(c, ctx))) {
    throw new ApiError("forbidden", "Cross-site request refused: account changes must come from the account page.", {
      reason: "CROSS_SITE",
    });
  }
}

/** better-auth at /api/auth/*, the account page at /account. */
export function registerAccount(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  // better-auth is loaded, and its tables created, on the first account or sign-in request: it
  // costs over half a second and tens of MB at start-up that a lookup-only process never needs.
  // A failure (database down) is not remembered, so the next request tries again.
  let loading: Promise<LoadedAuth> | undefined;
  const mailOutcome = new AsyncLocalStorage<MailOutcome>();
  /** Runs `fn` (which may send a sign-in code) and tells whether the mail lane refused the code. */
  const watchingMail = async <T>(fn: () => Promise<T>): Promise<{ result: T; refused?: string }> => {
    const outcome: MailOutcome = {};
    const result = await mailOutcome.run(outcome, fn);
    return { result, refused: outcome.refused };
  };
  const loadAuth = () => {
    loading ??= import("./auth.js")
      .then(async (m) => ({
        auth: await m.startAuth({
          config: deps.config,
          database: deps.database,
          logger: deps.logger,
          mail: () => deps.mail,
          mailOutcome,
          secret: deps.authSecret,
          limiter: deps.limiter,
        }),
        isAPIError: m.isAPIError,
      }))
      .catch((err: unknown) => {
        loading = undefined;
        throw err;
      });
    return loading;
  };
  const ctx: AccountContext = {
    deps,
    loadAuth,
    secret: deps.authSecret,
    publicOrigin: new URL(deps.config.PUBLIC_URL).origin,
    originFixed: deps.config.PUBLIC_URL_FIXED,
  };
  /** Spends one sign-in `action` for `address` from this request's IP (and browser, when known for it). */
  const spend = (c: Context<AppEnv>, action: SignInAction, address: string) =>
    spendSignIn(
      deps.limiter,
      action,
      c.get("clientKey"),
      address,
      isKnownBrowser(c, deps.config.PUBLIC_URL, ctx.secret, address),
    );
  /** The cookie that marks this browser as known for `address` after a completed sign-in. */
  const rememberBrowser = (c: Context<AppEnv>, address: string) =>
    knownBrowserCookie(c, deps.config.PUBLIC_URL, ctx.secret, address);

  // Before any handler: a redirect to /account?notice=… marks the notice to be said once.
  app.use("/account/*", markNotice);
  app.use("/api/auth/*", markNotice);

  app.on(["GET", "POST"], "/api/auth/*", async (c) => {
    const sub = c.req.path.slice("/api/auth".length);
    const route = EXPOSED.find((r) => r.method === c.req.method && r.path.test(sub));
    if (!route) throw new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`);
    if (!deps.mail && c.req.path === SEND_OTP_PATH) {
      throw new ApiError("unavailable", "Sign-in is unavailable: no mail lane is configured on this server.");
    }
    let address = "";
    if (route.limit) {
      const body = (await c.req.raw
        .clone()
        .json()
        .catch(() => null)) as { email?: unknown } | null;
      // Without an address better-auth answers 400 itself; the IP budget is spent either way.
      address = typeof body?.email === "string" ? body.email : "";
      const budget = await spend(c, route.limit, address);
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
    const { auth } = await loadAuth();
    const { result: res, refused } = await watchingMail(() => auth.handler(req));
    if (refused) {
      throw new ApiError("upstream_error", "The sign-in code could not be sent: the mail server refused it.");
    }
    const error = await asApiError(res);
    if (!error) {
      if (route.limit === "check") res.headers.append("Set-Cookie", rememberBrowser(c, address));
      return res;
    }
    if (error.code === "internal") deps.logger.error({ status: res.status, path: c.req.path }, "better-auth failed");
    const answer = renderError(c, error);
    for (const cookie of res.headers.getSetCookie()) answer.headers.append("Set-Cookie", cookie);
    return answer;
  });

  // With PUBLIC_URL set, a page opened on another host name (127.0.0.1, an internal name) moves
  // to PUBLIC_URL before any form is shown, so cookies and same-origin checks use one host.
  // Host names are compared without the port: cookies ignore ports, and a proxy may pass its own
  // (nginx's `$host` has none), so a port alone never redirects (that could loop). A request
  // without a Host header (HTTP/1.0, an in-process test) has nowhere else to be.
  const publicHostname = new URL(deps.config.PUBLIC_URL).hostname;
  const toPublicHost: MiddlewareHandler<AppEnv> = async (c, next) => {
    const host = c.req.header("host");
    const elsewhere = host !== undefined && URL.parse(`http://${host}`)?.hostname !== publicHostname;
    if (!ctx.originFixed || !elsewhere || !["GET", "HEAD"].includes(c.req.method)) return next();
    const here = new URL(c.req.url);
    return c.redirect(`${deps.config.PUBLIC_URL}${here.pathname}${here.search}`, 302);
  };
  app.use("/account", toPublicHost);
  app.use("/account/*", toPublicHost);
  app.use("/account", pageHeaders());
  app.use("/account/*", pageHeaders());
  app.get("/account/assets/account.css", (c) =>
    c.body(ACCOUNT_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600" }),
  );
  app.get("/account/assets/account.js", (c) =>
    c.body(ACCOUNT_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
    }),
  );

  const signInPage = (
    c: Context<AppEnv>,
    state: SignInStep,
    status: 200 | 400 | 429 | 502 | 503 = 200,
    error?: string,
  ) => c.html(SignInPage({ state, notice: error ? { kind: "error", text: error } : undefined }), status);

  /** 429 page saying how long to wait, with Retry-After. */
  const tooMany = (c: Context<AppEnv>, state: SignInStep, retryAfterSec: number) => {
    c.header("Retry-After", String(retryAfterSec));
    const minutes = Math.ceil(retryAfterSec / 60);
    return signInPage(
      c,
      state,
      429,
      `Too many sign-in attempts. Try again in ${minutes} minute${minutes > 1 ? "s" : ""}.`,
    );
  };

  const secure = cookiePolicy(deps.config.PUBLIC_URL).secure;

  /** What a signed-out GET /account shows: the code form while a sign-in is pending. */
  const signedOutState = async (c: Context<AppEnv>): Promise<{ state: SignInStep; notice?: Notice }> => {
    if (!deps.mail) return { state: { step: "unavailable" } };
    const pending = await readPendingSignIn(c, ctx.secret);
    if (!pending) return { state: { step: "email" } };
    const { notice, ...rest } = pending;
    if (notice) await setPendingSignIn(c, ctx.secret, rest, secure); // say it once
    // A dead code (expired, or tried too often): the address form again, filled in, to send a new one.
    if (pending.left <= 0) {
      const state: SignInStep = { step: "email", email: pending.email };
      if (notice === "expired")
        return { state, notice: { kind: "error", text: "That code has expired. Send a new one below." } };
      if (notice === "too_many")
        return {
          state,
          notice: { kind: "error", text: "Too many wrong codes: that code no longer works. Send a new one below." },
        };
      return { state };
    }
    const state: SignInStep = { step: "code", email: pending.email, left: pending.left };
    if (notice === "wrong") {
      const tries = `${pending.left} ${pending.left === 1 ? "try" : "tries"} left`;
      return { state, notice: { kind: "error", text: `That code is wrong. ${tries}.` } };
    }
    if (notice === "resent") return { state, notice: { kind: "ok", text: "A new code is on its way." } };
    return { state };
  };

  // Same status, body and headers whether or not the address has an account: both get a code.
  app.post("/account/sign-in", async (c) => {
    requireSameOrigin(c, ctx);
    if (!deps.mail) return signInPage(c, { step: "unavailable" }, 503);
    const parsed = Email.safeParse(
      field(await formBody(c), "email")
        .trim()
        .toLowerCase(),
    );
    if (!parsed.success) return signInPage(c, { step: "email" }, 400, "Enter a valid e-mail address.");
    const email = parsed.data;
    const budget = await spend(c, "send", email);
    if (!budget.allowed) return tooMany(c, { step: "email" }, budget.retryAfterSec);
    const { auth } = await loadAuth();
    const { refused } = await watchingMail(() =>
      auth.api.sendVerificationOTP({ body: { email, type: "sign-in" }, headers: authHeaders(c) }),
    );
    if (refused) {
      return signInPage(c, { step: "email" }, 502, "We could not send the code right now. Try again later.");
    }
    const earlier = await readPendingSignIn(c, ctx.secret);
    await setPendingSignIn(
      c,
      ctx.secret,
      { email, left: OTP_ALLOWED_ATTEMPTS, ...(earlier?.email === email && { notice: "resent" as const }) },
      secure,
    );
    // Post/Redirect/Get: a reload shows the code form again and sends nothing.
    return c.redirect("/account", 303);
  });

  app.post("/account/verify", async (c) => {
    requireSameOrigin(c, ctx);
    if (!deps.mail) return signInPage(c, { step: "unavailable" }, 503);
    const body = await formBody(c);
    const email = Email.safeParse(field(body, "email").trim().toLowerCase());
    if (!email.success) return signInPage(c, { step: "email" }, 400, "Enter a valid e-mail address.");
    const code = field(body, "code").trim();
    const pending = await readPendingSignIn(c, ctx.secret);
    const left = pending?.email === email.data ? pending.left : OTP_ALLOWED_ATTEMPTS;
    const budget = await spend(c, "check", email.data);
    if (!budget.allowed) return tooMany(c, { step: "code", email: email.data, left }, budget.retryAfterSec);
    const { auth, isAPIError } = await loadAuth();
    try {
      const { headers } = await auth.api.signInEmailOTP({
        body: { email: email.data, otp: code },
        headers: authHeaders(c),
        returnHeaders: true,
      });
      clearPendingSignIn(c, secure);
      for (const cookie of headers.getSetCookie()) c.header("Set-Cookie", cookie, { append: true });
      c.header("Set-Cookie", rememberBrowser(c, email.data), { append: true });
      return c.redirect("/account", 303);
    } catch (err) {
      if (!isAPIError(err) || err.statusCode >= 500) throw err;
      // Post/Redirect/Get here too: a reload never re-posts a code (and spends a try).
      const dead =
        err.body?.code === "OTP_EXPIRED"
          ? "expired"
          : err.body?.code === "TOO_MANY_ATTEMPTS" || left <= 1
            ? "too_many"
            : undefined;
      if (dead) {
        await setPendingSignIn(c, ctx.secret, { email: email.data, left: 0, notice: dead }, secure);
        return c.redirect("/account", 303);
      }
      await setPendingSignIn(c, ctx.secret, { email: email.data, left: left - 1, notice: "wrong" }, secure);
      return c.redirect("/account", 303);
    }
  });

  app.post("/account/sign-in/restart", (c) => {
    requireSameOrigin(c, ctx);
    clearPendingSignIn(c, secure);
    return c.redirect("/account", 303);
  });

  registerAccountActions(app, ctx, signedOutState);
}
