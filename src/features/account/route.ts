import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/types.js";
import { billingOf, checkoutLocation } from "../billing/index.js";
import { registerAccountActions } from "./actions.js";
import { registerAccountAssets } from "./assets.js";
import { registerAuthProxy } from "./auth-proxy.js";
import { type AccountDeps, accountContext, pageOrigin } from "./context.js";
import { pageHeaders } from "./http.js";
import { markNotice } from "./notice-once.js";
import { registerSignIn } from "./sign-in.js";

/** better-auth at /api/auth/*, the account page at /account. */
export function registerAccount(app: OpenAPIHono<AppEnv>, deps: AccountDeps): void {
  const ctx = accountContext(deps);

  // Before any handler: a redirect to /account?notice=… marks the notice to be said once.
  app.use("/account/*", markNotice);
  app.use("/api/auth/*", markNotice);
  registerAuthProxy(app, ctx);

  // With PUBLIC_URL set, a page opened on another host name (127.0.0.1, an internal name) moves
  // to PUBLIC_URL before any form is shown, so cookies and same-origin checks use one host.
  // Host names are compared without the port: cookies ignore ports, and a proxy may pass its own
  // (nginx's `$host` has none), so a port alone never redirects (that could loop). A request
  // without a Host header (HTTP/1.0, an in-process test) has nowhere else to be.
  const publicHostname = new URL(ctx.deps.config.PUBLIC_URL).hostname;
  const toPublicHost: MiddlewareHandler<AppEnv> = async (c, next) => {
    const host = c.req.header("host");
    const elsewhere = host !== undefined && URL.parse(`http://${host}`)?.hostname !== publicHostname;
    if (!ctx.originFixed || !elsewhere || !["GET", "HEAD"].includes(c.req.method)) return next();
    const here = new URL(c.req.url);
    return c.redirect(`${ctx.deps.config.PUBLIC_URL}${here.pathname}${here.search}`, 302);
  };
  app.use("/account", toPublicHost);
  app.use("/account/*", toPublicHost);
  app.use("/account", pageHeaders());
  app.use("/account/*", pageHeaders());
  registerAccountAssets(app);
  const billing = billingOf(ctx.deps);
  const signedOutState = registerSignIn(app, ctx, (c, user, plan) =>
    checkoutLocation(
      { payments: ctx.deps.payments, store: billing.store, logger: ctx.deps.logger },
      user,
      plan,
      pageOrigin(c, ctx),
    ),
  );
  registerAccountActions(app, ctx, signedOutState);
}
