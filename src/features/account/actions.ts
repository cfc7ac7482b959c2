import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { billingOf, billingView, registerBillingPages } from "../billing/index.js";
import { isPlanName, quotaPool } from "../keys/index.js";
import { registerActivityPage } from "./activity-page.jsx";
import { type AccountContext, pageOrigin, requireSameOrigin } from "./context.js";
import { csrfToken, csrfTokenValid } from "./csrf.js";
import { takeKeyFlash } from "./flash.js";
import { authHeaders, field, formBody, seeOther } from "./http.js";
import { registerKeyActions } from "./keys-actions.js";
import { takeNotice } from "./notice-once.js";
import { SESSION_FRESH_SEC } from "./policy.js";
import { configuredProviders, type LinkProvider } from "./providers.js";
import { chosenPlan } from "./sign-in-flow.js";
import { PROVIDER_STARTS } from "./sign-in-limits.js";
import { AccountPage, type Identity, type Notice, SignInPage, type SignInStep } from "./views.jsx";

/** Fixed notices for `/account?notice=…` (never echo free text from the URL). */
const NOTICES: Record<string, Notice> = {
  revoked: { kind: "ok", text: "The key was revoked." },
  created: { kind: "ok", text: "The key was created." },
  rolled: { kind: "ok", text: "The key was rolled; here is its replacement." },
  updated: { kind: "ok", text: "The key was changed." },
  linked: { kind: "ok", text: "The identity was linked." },
  unlinked: { kind: "ok", text: "The identity was unlinked." },
  signed_out: { kind: "ok", text: "You are signed out." },
};

/**
 * An OAuth callback whose state is unknown (expired, already used: a reload or the back button) or
 * was started in another browser (a callback URL handed over by someone else). Nothing changed.
 */
const STALE_CALLBACK =
  "The identity provider's answer did not match a sign-in started in this browser (it had expired or was already used): nothing changed. Start again.";

const NO_USABLE_ADDRESS =
  "The identity provider has not verified a usable e-mail address for this identity, so no account was made. Sign in with your e-mail address instead.";

/** Why a direct sign-in with an identity provider came back without a session (`?error=` from better-auth). */
const PROVIDER_SIGN_IN_ERRORS: Record<string, string> = {
  state_mismatch: STALE_CALLBACK,
  state_not_found: STALE_CALLBACK,
  account_not_linked:
    "No account has this identity linked yet. Sign in with your e-mail address, then link it under “Linked identities”.",
  signup_disabled:
    "No account has this identity linked yet. Sign in with your e-mail address, then link it under “Linked identities”.",
  unable_to_create_user: NO_USABLE_ADDRESS,
  email_not_found: NO_USABLE_ADDRESS,
};

const LINK_ERRORS: Record<string, string> = {
  state_mismatch: STALE_CALLBACK,
  state_not_found: STALE_CALLBACK,
  account_already_linked_to_different_user: "That identity is already linked to another account.",
};

/** 404 for a provider not configured; 409 for one configured but unusable on this host (no PUBLIC_URL). */
function noProvider(id: string, configured: LinkProvider[]): ApiError {
  if (!configured.some((p) => p.id === id))
    return new ApiError("not_found", `No identity provider ${id} is configured.`);
  return new ApiError(
    "conflict",
    "Identity providers work only on the server's public address: the operator must set PUBLIC_URL to the address this page was opened on.",
  );
}

/** The signed-in part of /account: keys, identities, sign out. Every POST: same origin + CSRF token. */
export function registerAccountActions(
  app: OpenAPIHono<AppEnv>,
  ctx: AccountContext,
  signedOut: (c: Context<AppEnv>) => Promise<{ state: SignInStep; notice?: Notice }>,
) {
  const { deps, loadAuth } = ctx;
  const providers = configuredProviders(deps.config);
  const billing = { ...billingOf(deps), payments: deps.payments };
  let warnedElsewhere = false;

  /**
   * The providers that can bring a browser back to this page. Without PUBLIC_URL, a provider
   * returns to PUBLIC_URL's default (http://localhost:PORT), not to another host the page was
   * opened on, where the sign-in would fail: there the buttons are left out, the page says why
   * and the log asks the operator for PUBLIC_URL (once per process).
   */
  function providersHere(c: Context<AppEnv>): { providers: LinkProvider[]; needPublicUrl?: string } {
    if (providers.length === 0 || ctx.originFixed || pageOrigin(c, ctx) === ctx.publicOrigin) return { providers };
    if (!warnedElsewhere) {
      warnedElsewhere = true;
      deps.logger.warn(
        { opened: pageOrigin(c, ctx), callbacks: ctx.publicOrigin },
        "identity providers are off on this host: set PUBLIC_URL to the address people open",
      );
    }
    return { providers: [], needPublicUrl: ctx.publicOrigin };
  }

  /** One of the client's PROVIDER_STARTS, or 429 SIGN_IN_LIMIT (an HTML page for a browser). */
  async function spendProviderStart(c: Context<AppEnv>) {
    const spent = await deps.limiter.consume(PROVIDER_STARTS, c.get("clientKey"));
    if (spent.allowed) return;
    throw new ApiError("rate_limited", "Too many sign-ins with an identity provider; retry later.", {
      reason: "SIGN_IN_LIMIT",
      headers: { "Retry-After": String(Math.max(1, Math.ceil(spent.resetMs / 1000))) },
    });
  }

  const session = async (c: Context<AppEnv>) => (await loadAuth()).auth.api.getSession({ headers: authHeaders(c) });

  /** Same-origin check, a live session, and the session's CSRF token, in that order. */
  async function guard(c: Context<AppEnv>) {
    requireSameOrigin(c, ctx);
    const s = await session(c);
    if (!s) throw new ApiError("unauthorized", "Sign in on the account page first.");
    const body = await formBody(c);
    if (!csrfTokenValid(ctx.secret, s.session.id, body.csrf)) {
      throw new ApiError("forbidden", "The form token is missing or stale: reload the account page.", {
        reason: "CSRF_TOKEN",
      });
    }
    return { s, body };
  }

  async function render(
    c: Context<AppEnv>,
    s: NonNullable<Awaited<ReturnType<typeof session>>>,
    extra: { notice?: Notice } = {},
    status: 200 | 400 = 200,
  ) {
    const keys = await deps.keys.accounts.overview(s.user.id);
    const plan = await deps.keys.accounts.accountPlan(s.user.id, s.user.email);
    const daily = await deps.keys.usage.daily(keys.map((k) => k.id));
    const planName = isPlanName(plan.name) ? plan.name : "free";
    const billingPage = await billingView(
      billing,
      s.user.id,
      quotaPool(s.user.id, s.user.email, planName),
      planName,
      (q) => c.req.query(q),
    );
    const flash = takeKeyFlash(c, ctx.secret, s.session.id, ctx.publicOrigin.startsWith("https:"));
    const { auth } = await loadAuth();
    const accounts = await auth.api.listUserAccounts({ headers: authHeaders(c) });
    const identities: Identity[] = accounts
      .filter((a) => a.providerId !== "credential")
      .map((a) => ({
        id: a.id,
        providerId: a.providerId,
        providerName: providers.find((p) => p.id === a.providerId)?.name ?? a.providerId,
        accountId: a.accountId,
      }));
    const view = {
      email: s.user.email,
      csrf: csrfToken(ctx.secret, s.session.id),
      keys,
      identities,
      ...providersHere(c),
      showAll: c.req.query("all") === "1",
      daily,
      billing: billingPage,
      ...{
        plan,
        flash,
        publicUrl: ctx.originFixed ? deps.config.PUBLIC_URL : pageOrigin(c, ctx),
        permission: deps.config.KEY_PERMISSION,
      },
    };
    return c.html(AccountPage({ ...view, ...extra }), status);
  }

  app.get("/account", async (c) => {
    const s = await session(c);
    const notice = NOTICES[takeNotice(c) ?? ""];
    if (!s) {
      const out = await signedOut(c);
      const error = c.req.query("error");
      const failed: Notice | undefined =
        error === undefined
          ? undefined
          : { kind: "error", text: PROVIDER_SIGN_IN_ERRORS[error] ?? "Signing in did not complete. Try again." };
      // A Buy on the home page while signed out: the plan rides through sign-in (chosenPlan).
      const buy = chosenPlan(c.req.query("buy"));
      const state = out.state.step === "email" && buy ? { ...out.state, buy } : out.state;
      return c.html(SignInPage({ state, notice: failed ?? out.notice ?? notice, ...providersHere(c) }));
    }
    const linkError = c.req.query("error");
    if (linkError !== undefined) {
      const text = LINK_ERRORS[linkError] ?? "Linking did not complete. Try again.";
      return render(c, s, { notice: { kind: "error", text } });
    }
    return render(c, s, { notice });
  });

  // keys: create / roll / revoke live in keys-actions.ts (plans, PRG, confirmation pages).
  registerKeyActions(app, ctx, { guard, session });
  registerActivityPage(app, ctx);
  registerBillingPages(app, { guard, origin: (c) => pageOrigin(c, ctx) }, { ...billing, logger: deps.logger });

  // Sign in with an identity: a linked one signs in to its account; an unknown one whose e-mail the
  // provider verified makes a new account (an address that already has an account is not merged:
  // ?error=account_not_linked); an unverified or unusable one makes none (?error=unable_to_create_user).
  app.post("/account/sign-in-with/:provider", async (c) => {
    requireSameOrigin(c, ctx);
    const provider = providersHere(c).providers.find((p) => p.id === c.req.param("provider"));
    if (!provider) throw noProvider(c.req.param("provider"), providers);
    await spendProviderStart(c);
    const buy = chosenPlan(field(await formBody(c), "buy"));
    const { auth } = await loadAuth();
    const { headers, response } = await auth.api.signInSocial({
      body: {
        provider: provider.id as "github",
        callbackURL: buy ? `/account?buy=${buy}#plans` : "/account",
        errorCallbackURL: "/account",
        disableRedirect: true,
      },
      headers: authHeaders(c),
      returnHeaders: true,
    });
    return seeOther(response.url ?? "/account", headers);
  });

  // A new way into the account needs a recent sign-in, as removing one does (better-auth's
  // freshAge on unlink): a session left open or a stolen cookie must not add the taker's identity.
  app.post("/account/link/:provider", async (c) => {
    const { s } = await guard(c);
    const provider = providersHere(c).providers.find((p) => p.id === c.req.param("provider"));
    if (!provider) throw noProvider(c.req.param("provider"), providers);
    if (deps.now().getTime() - new Date(s.session.createdAt).getTime() >= SESSION_FRESH_SEC * 1000) {
      return render(c, s, { notice: { kind: "error", text: "Sign out and in again to link." } }, 400);
    }
    await spendProviderStart(c);
    const { auth } = await loadAuth();
    const { headers, response } = await auth.api.linkSocialAccount({
      body: {
        provider: provider.id,
        callbackURL: "/account?notice=linked",
        errorCallbackURL: "/account",
        disableRedirect: true,
      },
      headers: authHeaders(c),
      returnHeaders: true,
    });
    return seeOther(response.url ?? "/account", headers);
  });

  app.post("/account/identities/:id/unlink", async (c) => {
    const { s } = await guard(c);
    const { auth, isAPIError } = await loadAuth();
    try {
      await auth.api.unlinkAccount({ body: { accountId: c.req.param("id") }, headers: authHeaders(c) });
    } catch (err) {
      if (isAPIError(err) && err.body?.code === "ACCOUNT_NOT_FOUND") {
        throw new ApiError("not_found", `No linked identity ${c.req.param("id")} on this account.`);
      }
      if (isAPIError(err) && err.body?.code === "SESSION_NOT_FRESH") {
        return render(c, s, { notice: { kind: "error", text: "Sign out and in again to unlink." } }, 400);
      }
      throw err;
    }
    return seeOther("/account?notice=unlinked");
  });

  app.post("/account/sign-out", async (c) => {
    await guard(c);
    const { auth } = await loadAuth();
    const { headers } = await auth.api.signOut({ headers: authHeaders(c), returnHeaders: true });
    return seeOther("/account?notice=signed_out", headers);
  });
}
