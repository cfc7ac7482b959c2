import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { noteFailure } from "../../http/failure.js";
import type { AppEnv } from "../../http/types.js";
import { SignInAddress as Email } from "./address.js";
import { type AccountContext, requireSameOrigin } from "./context.js";
import { authHeaders, field, formBody } from "./http.js";
import { cookiePolicy, OTP_ALLOWED_ATTEMPTS } from "./policy.js";
import { chosenPlan, clearPendingSignIn, readPendingSignIn, setPendingSignIn } from "./sign-in-flow.js";
import { type Notice, SignInPage, type SignInStep } from "./views.jsx";

/** What a signed-out GET /account shows (the address form, or the code form while a sign-in is pending). */
export type SignedOutState = (c: Context<AppEnv>) => Promise<{ state: SignInStep; notice?: Notice }>;

/**
 * Where a person who chose a paid plan before signing in goes once signed in (its checkout);
 * throws when it cannot (purchase not configured, Stripe down): the account page shows the plan instead.
 */
export type AfterSignIn = (c: Context<AppEnv>, user: { id: string; email: string }, plan: string) => Promise<string>;

/** The sign-in pages' form posts (/account/sign-in, /verify, /sign-in/restart); returns what a signed-out /account shows. */
export function registerSignIn(
  app: OpenAPIHono<AppEnv>,
  ctx: AccountContext,
  afterSignIn?: AfterSignIn,
): SignedOutState {
  const signInPage = (
    c: Context<AppEnv>,
    state: SignInStep,
    status: 200 | 400 | 429 | 502 | 503 = 200,
    error?: string,
  ) => c.html(SignInPage({ state, notice: error ? { kind: "error", text: error } : undefined }), status);

  /** 503: no mail lane, so no code can be sent. */
  const unavailable = (c: Context<AppEnv>) => {
    noteFailure(c, "unavailable", 503, "no mail lane is configured (MAIL_URL)");
    return signInPage(c, { step: "unavailable" }, 503);
  };

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

  const secure = cookiePolicy(ctx.deps.config.PUBLIC_URL).secure;

  /** What a signed-out GET /account shows: the code form while a sign-in is pending. */
  const signedOutState = async (c: Context<AppEnv>): Promise<{ state: SignInStep; notice?: Notice }> => {
    if (!ctx.deps.mail) return { state: { step: "unavailable" } };
    const pending = await readPendingSignIn(c, ctx.secret);
    if (!pending) return { state: { step: "email" } };
    const { notice, ...rest } = pending;
    if (notice) await setPendingSignIn(c, ctx.secret, rest, secure); // say it once
    // A dead code (expired, or tried too often): the address form again, filled in, to send a new one.
    if (pending.left <= 0) {
      const state: SignInStep = { step: "email", email: pending.email, buy: pending.buy };
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
    if (!ctx.deps.mail) return unavailable(c);
    const body = await formBody(c);
    const buy = chosenPlan(field(body, "buy"));
    const parsed = Email.safeParse(field(body, "email").trim().toLowerCase());
    if (!parsed.success) return signInPage(c, { step: "email", buy }, 400, "Enter a valid e-mail address.");
    const email = parsed.data;
    const budget = await ctx.spend(c, "send", email);
    if (!budget.allowed) return tooMany(c, { step: "email", buy }, budget.retryAfterSec);
    const { auth } = await ctx.loadAuth();
    const { refused } = await ctx.watchingMail(() =>
      auth.api.sendVerificationOTP({ body: { email, type: "sign-in" }, headers: authHeaders(c) }),
    );
    if (refused) {
      noteFailure(c, "upstream_error", 502, `mail lane: ${refused}`);
      return signInPage(c, { step: "email", buy }, 502, "We could not send the code right now. Try again later.");
    }
    const earlier = await readPendingSignIn(c, ctx.secret);
    await setPendingSignIn(
      c,
      ctx.secret,
      {
        email,
        left: OTP_ALLOWED_ATTEMPTS,
        ...(buy && { buy }),
        ...(earlier?.email === email && { notice: "resent" as const }),
      },
      secure,
    );
    // Post/Redirect/Get: a reload shows the code form again and sends nothing.
    return c.redirect("/account", 303);
  });

  app.post("/account/verify", async (c) => {
    requireSameOrigin(c, ctx);
    if (!ctx.deps.mail) return unavailable(c);
    const body = await formBody(c);
    const email = Email.safeParse(field(body, "email").trim().toLowerCase());
    if (!email.success) return signInPage(c, { step: "email" }, 400, "Enter a valid e-mail address.");
    const code = field(body, "code").trim();
    const pending = await readPendingSignIn(c, ctx.secret);
    const left = pending?.email === email.data ? pending.left : OTP_ALLOWED_ATTEMPTS;
    const budget = await ctx.spend(c, "check", email.data);
    if (!budget.allowed) return tooMany(c, { step: "code", email: email.data, left }, budget.retryAfterSec);
    const { auth, isAPIError } = await ctx.loadAuth();
    try {
      const { headers, response } = await auth.api.signInEmailOTP({
        body: { email: email.data, otp: code },
        headers: authHeaders(c),
        returnHeaders: true,
      });
      clearPendingSignIn(c, secure);
      for (const cookie of headers.getSetCookie()) c.header("Set-Cookie", cookie, { append: true });
      c.header("Set-Cookie", ctx.rememberBrowser(c, email.data), { append: true });
      const buy = pending?.email === email.data ? pending.buy : undefined;
      if (!buy) return c.redirect("/account", 303);
      // Chosen before signing in: straight on to its checkout, or the account page with it marked.
      const location = await afterSignIn?.(c, response.user, buy).catch(() => undefined);
      return c.redirect(location ?? `/account?buy=${buy}#plans`, 303);
    } catch (err) {
      if (!isAPIError(err) || err.statusCode >= 500) throw err;
      // Post/Redirect/Get here too: a reload never re-posts a code (and spends a try).
      const dead =
        err.body?.code === "OTP_EXPIRED"
          ? "expired"
          : err.body?.code === "TOO_MANY_ATTEMPTS" || left <= 1
            ? "too_many"
            : undefined;
      const buy = pending?.email === email.data && pending.buy ? { buy: pending.buy } : {};
      if (dead) {
        await setPendingSignIn(c, ctx.secret, { email: email.data, left: 0, notice: dead, ...buy }, secure);
        return c.redirect("/account", 303);
      }
      await setPendingSignIn(c, ctx.secret, { email: email.data, left: left - 1, notice: "wrong", ...buy }, secure);
      return c.redirect("/account", 303);
    }
  });

  app.post("/account/sign-in/restart", (c) => {
    requireSameOrigin(c, ctx);
    clearPendingSignIn(c, secure);
    return c.redirect("/account", 303);
  });

  return signedOutState;
}
