import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";

export interface OidcUser {
  sub: string;
  email: string;
  name?: string;
  emailVerified?: boolean;
}

export interface OidcTestProvider {
  /** `http://127.0.0.1:PORT` — the issuer, for OIDC_ISSUER. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The user the next authorization signs in as (there is no login form: login and consent are automatic). */
  setUser(user: OidcUser): void;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (`oidc-provider`) on 127.0.0.1 (port 0) with one confidential
 * client. Interactions complete on their own as the current user, so a test (or a headless
 * browser) runs the full authorization-code + PKCE flow without a login form.
 */
export async function startOidcProvider(opts: { redirectUris: string[] }): Promise<OidcTestProvider> {
  let user: OidcUser = { sub: "oidc-user-1", email: "someone@idp.example", name: "Someone" };
  const clientId = "almanac-test";
  const clientSecret = "almanac-test-secret-0123456789abcdef";
  const sockets = new Set<Socket>();
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer((req, res) => handler(req, res));
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    findAccount: (_ctx: KoaContextWithOIDC, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, email: user.email, email_verified: user.emailVerified ?? true, name: user.name }),
    }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ["almanac-oidc-test-cookie-key"] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  });
  // Quiet: the provider logs a warning for every dev-only default (keys, in-memory adapter).
  provider.on("server_error", () => {});

  const oidc = provider.callback();
  handler = (req, res) => {
    if (!req.url?.startsWith("/interaction/")) return void oidc(req, res);
    void autoComplete(provider, req, res, () => user.sub).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  };

  return {
    issuer,
    clientId,
    clientSecret,
    setUser: (u) => {
      user = u;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Login as the current user, then grant exactly what was asked. */
async function autoComplete(provider: Provider, req: IncomingMessage, res: ServerResponse, sub: () => string) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") {
    await provider.interactionFinished(req, res, { login: { accountId: sub() } }, { mergeWithLastSubmission: false });
    return;
  }
  const accountId = details.session?.accountId ?? sub();
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  if (!grant) throw new Error("grant vanished");
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
