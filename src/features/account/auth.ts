import { AsyncLocalStorage } from "node:async_hooks";
import { kyselyAdapter } from "@better-auth/kysely-adapter";
import { betterAuth } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { getMigrations } from "better-auth/db/migration";
import { emailOTP, genericOAuth } from "better-auth/plugins";
import { type Kysely, sql } from "kysely";
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import type { MailLane } from "../../ports/mail-lane.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import { SignInAddress } from "./address.js";
import { authLogging } from "./auth-log.js";
import { withHashedSessionTokens } from "./hashed-sessions.js";
import { CLIENT_IP_HEADER, cookiePolicy, OTP_ALLOWED_ATTEMPTS, OTP_EXPIRES_SEC, SESSION_FRESH_SEC } from "./policy.js";
import { configuredProviders } from "./providers.js";
import { SIGN_IN_CODE_TRIES } from "./sign-in-limits.js";

export interface AuthDeps {
  config: Config;
  database: Database;
  logger: Logger;
  /** Read at send time, so a lane swapped in after construction is the one used. */
  mail: () => MailLane | undefined;
  /**
   * Where a refused code mail is reported to the request that asked for it. better-auth runs the
   * sender through `runInBackgroundOrAwait`, which awaits it but swallows what it throws (1.7): a
   * refusal would otherwise be answered "code sent". The caller runs the request inside
   * `mailOutcome.run({})` and reads `refused` afterwards.
   */
  mailOutcome: AsyncLocalStorage<MailOutcome>;
  /** Signs sessions (deps.authSecret). */
  secret: string;
  /** The shared limiter, which counts the tries at each sign-in code (codeTries). */
  limiter: RateLimiter;
}

export interface MailOutcome {
  refused?: string;
  /** What failed inside better-auth, which answered with its own 500 (the proxy tells a database outage from a bug). */
  failure?: unknown;
}

/**
 * Every try at a sign-in code spends one of its OTP_ALLOWED_ATTEMPTS before better-auth looks at
 * the code, on both paths (the page calls auth.api, the JSON route the handler; hooks run for
 * both). better-auth counts its own attempts too, but only the tries that find the code row: while
 * one try holds it (it deletes and re-creates the row), concurrent tries are answered "invalid"
 * uncounted, so 8 simultaneous wrong guesses could leave the code alive. This counter is one
 * atomic spend per request in the shared limiter (Redis across instances), so after the allowed
 * tries the code is deleted and every further try is refused, however they arrive. Asking for a
 * new code starts the count afresh (before the code is made, so no try at the new code escapes it).
 */
function codeTries(limiter: RateLimiter) {
  return createAuthMiddleware(async (ctx) => {
    const body = ctx.body as { email?: unknown; type?: unknown } | undefined;
    if (typeof body?.email !== "string") return;
    const email = body.email.toLowerCase();
    if (ctx.path === "/email-otp/send-verification-otp" && body.type === "sign-in") {
      await limiter.reset(SIGN_IN_CODE_TRIES, email);
    } else if (ctx.path === "/sign-in/email-otp") {
      if ((await limiter.consume(SIGN_IN_CODE_TRIES, email)).allowed) return;
      await ctx.context.internalAdapter.deleteVerificationByIdentifier(`sign-in-otp-${email}`);
      throw new APIError("FORBIDDEN", { code: "TOO_MANY_ATTEMPTS", message: "Too many attempts" });
    }
  });
}

/** Windows kept at most; expired ones are dropped first, then the oldest. */
const WINDOW_ENTRIES_MAX = 10_000;

/**
 * better-auth's "memory" storage is one Map in its module, shared by every instance in the
 * process (several apps in one test worker spent each other's tries). This is the same fixed
 * window, one per instance: `max` requests per key in `window` seconds, check and count at once.
 */
function ownWindow() {
  const windows = new Map<string, { count: number; endsAt: number }>();
  return {
    async consume(key: string, rule: { window: number; max: number }) {
      const now = Date.now();
      const w = windows.get(key);
      if (!w || now >= w.endsAt) {
        windows.delete(key);
        if (windows.size >= WINDOW_ENTRIES_MAX) {
          for (const [k, v] of windows) if (now >= v.endsAt) windows.delete(k);
          for (const k of windows.keys()) {
            if (windows.size < WINDOW_ENTRIES_MAX) break;
            windows.delete(k);
          }
        }
        windows.set(key, { count: 1, endsAt: now + rule.window * 1000 });
        return { allowed: true, retryAfter: null };
      }
      if (w.count < rule.max) {
        w.count++;
        return { allowed: true, retryAfter: null };
      }
      return { allowed: false, retryAfter: Math.max(1, Math.ceil((w.endsAt - now) / 1000)) };
    },
  };
}

/** What an identity's row keeps of its provider's tokens (auth_account): nothing. */
const NO_PROVIDER_TOKENS = {
  accessToken: null,
  refreshToken: null,
  idToken: null,
  accessTokenExpiresAt: null,
  refreshTokenExpiresAt: null,
};

/**
 * The code, and a link back to the page that asks for it: PUBLIC_URL's, never the request's Host
 * (a forged Host would put another site's link in a genuine mail). Without PUBLIC_URL no link at
 * all: its default, localhost, opens only on the server's own machine.
 */
function otpMail(code: string, config: Pick<Config, "PUBLIC_URL" | "PUBLIC_URL_FIXED">) {
  const minutes = OTP_EXPIRES_SEC / 60;
  const where = config.PUBLIC_URL_FIXED
    ? `Enter it on the sign-in page: ${config.PUBLIC_URL}/account`
    : "Enter it on the sign-in page where you asked for it";
  return {
    subject: "Your Almanac sign-in code",
    text:
      `Your Almanac sign-in code is ${code}\n\n` +
      `${where}\n\n` +
      `It expires in ${minutes} minutes and works once. If you did not ask for it, ignore this mail.\n`,
  };
}

export function authOptions(deps: AuthDeps) {
  const { config, database, logger } = deps;
  const cookies = cookiePolicy(config.PUBLIC_URL);
  const providers = configuredProviders(config);
  const oidc = providers.find((p) => p.id === "oidc");
  const logging = authLogging(logger);
  return {
    appName: "Almanac",
    baseURL: config.PUBLIC_URL,
    basePath: "/api/auth",
    secret: deps.secret,
    // Our own Kysely (one pool), with session tokens stored only as SHA-256 (see hashed-sessions.ts).
    database: withHashedSessionTokens(
      kyselyAdapter(database.db as unknown as Kysely<Record<string, unknown>>, {
        type: database.dialect,
        transaction: true,
      }),
    ),
    // PUBLIC_URL unset: the page may be opened on any host name, and a request is trusted from its
    // own origin (our same-origin check has already run on every state-changing route).
    trustedOrigins: config.PUBLIC_URL_FIXED
      ? [new URL(config.PUBLIC_URL).origin]
      : (request?: Request) => [new URL(request?.url ?? config.PUBLIC_URL).origin],
    user: { modelName: "auth_user" },
    session: { modelName: "auth_session", freshAge: SESSION_FRESH_SEC },
    account: {
      modelName: "auth_account",
      accountLinking: {
        enabled: true,
        // An external e-mail never merges into an existing account: linking happens only by
        // an explicit link while signed in (the callback checks the live session).
        disableImplicitLinking: true,
        // Explicit linking is the user's own choice, so the linked identity may carry another address,
        // and the operator-configured providers are trusted for that explicit step.
        allowDifferentEmails: true,
        trustedProviders: providers.map((p) => p.id),
        // E-mail sign-in always remains, so every linked identity may be removed.
        allowUnlinkingAll: true,
      },
    },
    // Expired states and codes are deleted by the expired-rows sweep (sweep.ts), not by the next
    // OAuth callback's request.
    verification: { modelName: "auth_verification", disableCleanup: true },
    // Sign-up with an identity provider only for an address the provider has verified
    // (e-mail codes verify their own): an account made for an unverified address would wait for
    // that address's owner to sign in by code and find someone else's identity already in it.
    databaseHooks: {
      // Almanac never calls a provider after the sign-in, so it keeps none of its tokens: GitHub's
      // never expire, and a copy of the database would be a key to every linked user's profile.
      account: {
        create: { before: async () => ({ data: NO_PROVIDER_TOKENS }) },
        update: { before: async () => ({ data: NO_PROVIDER_TOKENS }) },
      },
      user: {
        // …and only for an address a code can reach (a provider's " a@b.example" or "a@b.example."
        // would make an account named like another that no code ever signs in to).
        create: {
          before: async (user: { email?: string; emailVerified?: boolean }) =>
            user.emailVerified && SignInAddress.safeParse(user.email).success ? undefined : false,
        },
      },
    },
    socialProviders: {
      ...(config.GITHUB_CLIENT_ID &&
        config.GITHUB_CLIENT_SECRET && {
          github: {
            clientId: config.GITHUB_CLIENT_ID,
            clientSecret: config.GITHUB_CLIENT_SECRET,
          },
        }),
      ...(config.GOOGLE_CLIENT_ID &&
        config.GOOGLE_CLIENT_SECRET && {
          google: {
            clientId: config.GOOGLE_CLIENT_ID,
            clientSecret: config.GOOGLE_CLIENT_SECRET,
          },
        }),
    },
    plugins: [
      emailOTP({
        otpLength: 6,
        expiresIn: OTP_EXPIRES_SEC,
        allowedAttempts: OTP_ALLOWED_ATTEMPTS,
        storeOTP: "hashed",
        async sendVerificationOTP({ email, otp, type }) {
          const lane = deps.mail();
          if (!lane) throw new APIError("SERVICE_UNAVAILABLE", { message: "Sign-in is unavailable." });
          if (type !== "sign-in") throw new APIError("BAD_REQUEST", { message: "Only sign-in codes are sent." });
          const sent = await lane.send({ to: email, ...otpMail(otp, config) });
          if (!sent.ok) {
            logger.warn({ reason: sent.reason }, "sign-in code mail refused");
            const outcome = deps.mailOutcome.getStore();
            if (outcome) outcome.refused = sent.reason;
            else throw new APIError("BAD_GATEWAY", { message: "The mail lane refused the sign-in code." });
          }
        },
      }),
      ...(oidc && config.OIDC_ISSUER && config.OIDC_CLIENT_ID
        ? [
            genericOAuth({
              config: [
                {
                  providerId: "oidc",
                  name: config.OIDC_NAME,
                  discoveryUrl: `${config.OIDC_ISSUER.replace(/\/+$/, "")}/.well-known/openid-configuration`,
                  clientId: config.OIDC_CLIENT_ID,
                  clientSecret: config.OIDC_CLIENT_SECRET,
                  scopes: ["openid", "email", "profile"],
                  pkce: true,
                },
              ],
            }),
          ]
        : []),
    ],
    hooks: { before: codeTries(deps.limiter) },
    // better-auth's own window is per process and answers 429 without our reason or Retry-After.
    // The code routes it would count (3 a minute per IP and instance) are counted by Almanac's
    // shared sign-in budgets instead (sign-in-limits.ts), on every path and across instances; a
    // burst it refused had already spent those budgets. Its window stays on for the other routes.
    rateLimit: {
      enabled: true,
      customStorage: ownWindow(),
      customRules: { "/email-otp/send-verification-otp": false as const, "/sign-in/email-otp": false as const },
    },
    advanced: {
      cookiePrefix: cookies.prefix,
      // better-auth would add `__Secure-`; our prefix already carries `__Host-` on https.
      useSecureCookies: false,
      defaultCookieAttributes: { secure: cookies.secure, httpOnly: true, sameSite: "lax" as const, path: "/" },
      // Its own window counts an IPv6 client by the same network as Almanac's limits.
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER], ipv6Subnet: config.CLIENT_IPV6_PREFIX },
      // better-auth skips its origin and callbackURL checks when NODE_ENV=test: keep them on, so
      // the tests run what production runs.
      disableOriginCheck: false,
    },
    ...logging,
    // A callback better-auth cannot tie to a flow (its state unknown: expired, already used by a
    // reload or the back button, or no state at all) went to its /api/auth/error page, which the
    // proxy does not serve (a 404): the account page says what happened instead.
    onAPIError: {
      errorURL: "/account",
      onError: (err: unknown) => {
        logging.onAPIError.onError(err);
        const outcome = deps.mailOutcome.getStore();
        if (outcome) outcome.failure = err;
      },
    },
    telemetry: { enabled: false },
  };
}

export function createAuth(deps: AuthDeps) {
  return betterAuth(authOptions(deps));
}

export type Auth = ReturnType<typeof createAuth>;

export { isAPIError } from "better-auth/api";
export { CLIENT_IP_HEADER, cookiePolicy, OTP_ALLOWED_ATTEMPTS, OTP_EXPIRES_SEC, sessionCookieName } from "./policy.js";

/** Migrations answer no requests, so they count nothing. */
const NO_REQUESTS: RateLimiter = {
  consume: () => Promise.reject(new Error("migrations count no sign-in tries")),
  refund: async () => {},
  reset: async () => {},
  ready: async () => true,
  close: async () => {},
};

/** better-auth ready to serve: its tables created or updated, then the instance. */
export async function startAuth(deps: AuthDeps): Promise<Auth> {
  await migrateAuth(deps);
  return createAuth(deps);
}

/**
 * Creates or updates better-auth's tables (auth_user, auth_session, auth_account, auth_verification).
 * Several instances may start at once: if another one created a table first, plan again (a few
 * times) rather than fail.
 */
export async function migrateAuth(deps: Omit<AuthDeps, "mail" | "mailOutcome" | "secret" | "limiter">): Promise<void> {
  // getMigrations needs the driver itself, not an adapter: the schema is the same. Nothing is
  // signed while migrating, so the secret is a placeholder (the CLI need not read DATA_DIR's).
  const options = {
    ...authOptions({
      ...deps,
      mail: () => undefined,
      mailOutcome: new AsyncLocalStorage(),
      secret: "migrations-only-placeholder-never-used-to-sign",
      limiter: NO_REQUESTS,
    }),
    database: deps.database.raw,
  };
  for (let attempt = 1; ; attempt++) {
    const plan = await getMigrations(options);
    if (plan.toBeCreated.length === 0 && plan.toBeAdded.length === 0) break;
    try {
      await plan.runMigrations();
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
  await oneAccountPerIdentity(deps);
  await dropProviderTokens(deps);
}

/** Tokens an older version stored (see NO_PROVIDER_TOKENS) are dropped: one idempotent UPDATE. */
async function dropProviderTokens(deps: Pick<AuthDeps, "database">): Promise<void> {
  await sql`update auth_account set "accessToken" = null, "refreshToken" = null, "idToken" = null,
      "accessTokenExpiresAt" = null, "refreshTokenExpiresAt" = null
    where "accessToken" is not null or "refreshToken" is not null or "idToken" is not null`.execute(deps.database.db);
}

/**
 * better-auth links an identity after finding it unlinked, in two statements: two link callbacks
 * at once (two accounts, one identity) both found it unlinked and both linked it. A unique index
 * refuses the second. If an older database already holds such a pair, the index waits (warned)
 * until the operator unlinks one.
 */
async function oneAccountPerIdentity(deps: Pick<AuthDeps, "database" | "logger">): Promise<void> {
  try {
    await sql`create unique index if not exists auth_account_identity on auth_account ("providerId", "accountId")`.execute(
      deps.database.db,
    );
  } catch (err) {
    deps.logger.warn({ err }, "an identity is linked to more than one account: auth_account_identity not created");
  }
}
