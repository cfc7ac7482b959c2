import { AsyncLocalStorage } from "node:async_hooks";
import type { Context } from "hono";
import type { AppDeps } from "../../app-deps.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { Auth, MailOutcome } from "./auth.js";
import { isSameOriginRequest } from "./csrf.js";
import { isKnownBrowser, knownBrowserCookie } from "./known-browser.js";
import { type SignInAction, spendSignIn } from "./sign-in-limits.js";

/** What the account feature uses of the app's dependencies. */
export type AccountDeps = Pick<
  AppDeps,
  "config" | "database" | "logger" | "mail" | "authSecret" | "limiter" | "keys" | "payments" | "now" | "activity"
>;

type AuthModule = typeof import("./auth.js");

/** better-auth, loaded on first use (see accountContext). */
export interface LoadedAuth {
  auth: Auth;
  isAPIError: AuthModule["isAPIError"];
}

/** What the account routes share: built once per app by accountContext. */
export interface AccountContext {
  deps: AccountDeps;
  loadAuth: () => Promise<LoadedAuth>;
  secret: string;
  publicOrigin: string;
  /** PUBLIC_URL was set: its origin is the only one the pages serve (see pageOrigin). */
  originFixed: boolean;
  /** Runs `fn` (which may send a sign-in code) and tells whether the mail lane refused the code, or what failed inside it. */
  watchingMail: <T>(fn: () => Promise<T>) => Promise<{ result: T; refused?: string; failure?: unknown }>;
  /** Spends one sign-in `action` for `address` from this request's IP (and browser, when known for it). */
  spend: (c: Context<AppEnv>, action: SignInAction, address: string) => ReturnType<typeof spendSignIn>;
  /** The cookie that marks this browser as known for `address` after a completed sign-in. */
  rememberBrowser: (c: Context<AppEnv>, address: string) => string;
}

export function accountContext(deps: AccountDeps): AccountContext {
  // better-auth is loaded, and its tables created, on the first account or sign-in request: it
  // costs over half a second and tens of MB at start-up that a lookup-only process never needs.
  // A failure (database down) is not remembered, so the next request tries again.
  let loading: Promise<LoadedAuth> | undefined;
  const mailOutcome = new AsyncLocalStorage<MailOutcome>();
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
  const secret = deps.authSecret;
  return {
    deps,
    loadAuth,
    secret,
    publicOrigin: new URL(deps.config.PUBLIC_URL).origin,
    originFixed: deps.config.PUBLIC_URL_FIXED,
    watchingMail: async (fn) => {
      const outcome: MailOutcome = {};
      const result = await mailOutcome.run(outcome, fn);
      return { result, refused: outcome.refused, failure: outcome.failure };
    },
    spend: (c, action, address) =>
      spendSignIn(
        deps.limiter,
        action,
        c.get("clientKey"),
        address,
        isKnownBrowser(c, deps.config.PUBLIC_URL, secret, address),
      ),
    rememberBrowser: (c, address) => knownBrowserCookie(c, deps.config.PUBLIC_URL, secret, address),
  };
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
