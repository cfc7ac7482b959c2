import { createHash, createHmac, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll } from "vitest";

/**
 * Local stand-ins for GitHub's and Google's OAuth endpoints, which tests cannot reach.
 * better-auth hardcodes their URLs (https://github.com/login/oauth/access_token,
 * https://api.github.com/user, https://oauth2.googleapis.com/token, …) and calls them with the
 * global `fetch`; `routeUpstreams` sends exactly those origins to a fake on 127.0.0.1 instead,
 * keeping the path and query and naming the original host in `X-Upstream-Host`. Each fake answers
 * as its provider documents (GitHub: "Authorizing OAuth apps", web application flow, and the REST
 * users and emails endpoints; Google: "Using OAuth 2.0 for Web Server Applications" and "OpenID
 * Connect"): the same parameters checked, the same success and error bodies and statuses.
 */

/** Replaces global `fetch` so requests to `origins` reach `base` (http://127.0.0.1:PORT); returns the undo. */
export function routeUpstreams(origins: string[], base: string): () => void {
  const real = globalThis.fetch;
  const routed = new Set(origins);
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    if (!routed.has(url.origin)) return real(req);
    const headers = new Headers(req.headers);
    headers.set("x-upstream-host", url.host);
    const body = ["GET", "HEAD"].includes(req.method) ? undefined : await req.arrayBuffer();
    return real(`${base}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body,
      redirect: req.redirect,
    });
  }) as typeof fetch;
  return () => {
    globalThis.fetch = real;
  };
}

interface Fake {
  base: string;
  close(): Promise<void>;
}

/**
 * Registers beforeAll/afterAll in the calling describe block: the fake started (its provider's
 * origins routed to it) and stopped. The getter reads it inside hooks and tests.
 */
export function fakeProvider<T extends Fake & { unroute: () => void }>(start: () => Promise<T>): () => T {
  let fake: T | undefined;
  beforeAll(async () => {
    fake = await start();
  });
  afterAll(async () => {
    fake?.unroute();
    await fake?.close();
  });
  return () => fake as T;
}

type Handler = (req: IncomingMessage, url: URL, body: string, host: string) => Promise<Answer> | Answer;
interface Answer {
  status: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

async function serve(handler: Handler): Promise<Fake> {
  const sockets = new Set<Socket>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://fake");
    const host = String(req.headers["x-upstream-host"] ?? req.headers.host);
    let answer: Answer;
    try {
      answer = await handler(req, url, Buffer.concat(chunks).toString(), host);
    } catch (err) {
      answer = { status: 500, text: String(err) };
    }
    const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.text ?? "");
    res.writeHead(answer.status, {
      ...(answer.json !== undefined && { "content-type": "application/json; charset=utf-8" }),
      ...answer.headers,
    });
    res.end(body);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const token = (prefix: string, n = 36) => prefix + randomBytes(n).toString("base64url").slice(0, n);
const redirect = (to: string, params: Record<string, string | undefined>): Answer => {
  const url = new URL(to);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return { status: 302, headers: { location: url.toString() } };
};

/** The client's credentials from the form body (client_secret_post) or `Authorization: Basic`. */
function clientOf(req: IncomingMessage, form: URLSearchParams): { id: string; secret: string } {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (basic) {
    const [id = "", secret = ""] = Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent);
    return { id, secret };
  }
  return { id: form.get("client_id") ?? "", secret: form.get("client_secret") ?? "" };
}

/** RFC 7636 S256: the challenge sent to the authorization endpoint against the verifier sent with the code. */
const pkceHolds = (challenge: string | null, verifier: string | null) =>
  challenge === null || (verifier !== null && createHash("sha256").update(verifier).digest("base64url") === challenge);

interface Grant {
  redirectUri: string;
  challenge: string | null;
  subject: string;
  expiresAt: number;
  /** Granted scopes as the token endpoint reports them. */
  scope: string;
  nonce?: string;
}

/** What an authorization request granted, for the code it answers with (10 minutes, once). */
function grantOf(q: URLSearchParams, redirectUri: string, subject: string, scope: string): Grant {
  return {
    redirectUri,
    challenge: q.get("code_challenge_method") === "S256" ? q.get("code_challenge") : null,
    subject,
    expiresAt: Date.now() + 10 * 60_000,
    scope,
    ...(q.has("nonce") && { nonce: q.get("nonce") as string }),
  };
}

export interface Client {
  clientId: string;
  clientSecret: string;
  /** Registered callback URL; GitHub allows a redirect_uri below it, Google only an exact match. */
  redirectUri: string;
}

/** The user the next authorization signs in as, and whether they decline it instead. */
class Approver<U> {
  private declineNext = false;
  constructor(public user: U) {}
  readonly setUser = (u: U) => {
    this.user = u;
  };
  readonly denyNext = () => {
    this.declineNext = true;
  };
  /** True once after denyNext. */
  declines(): boolean {
    const d = this.declineNext;
    this.declineNext = false;
    return d;
  }
}

/** A started fake as tests see it, with the provider's origins routed to it until `unroute`. */
function provider<U>(fake: Fake, client: Client, calls: string[], approver: Approver<U>, origins: string[]) {
  const { setUser, denyNext } = approver;
  return { ...fake, ...client, calls, setUser, denyNext, unroute: routeUpstreams(origins, fake.base) };
}

// ---------------------------------------------------------------------------------------------
// GitHub

export interface GitHubUser {
  id: number;
  login: string;
  name?: string | null;
  /** The public profile address (null when the user keeps it private). */
  email?: string | null;
  /** GET /user/emails. */
  emails: { email: string; primary: boolean; verified: boolean; visibility: "public" | "private" | null }[];
}

export interface GitHubFake extends Fake, Client {
  /** The user the next authorization signs in as (no login form: they approve at once). */
  setUser(user: GitHubUser): void;
  /** The next authorization is declined by the user (`error=access_denied`). */
  denyNext(): void;
  /** Requests the fake answered, by host and path (for asserting what better-auth called). */
  calls: string[];
}

const GITHUB_ORIGINS = ["https://github.com", "https://api.github.com"];
const GITHUB_TROUBLESHOOTING =
  "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";

export async function startGitHubFake(redirectUri: string): Promise<GitHubFake & { unroute: () => void }> {
  const client = { clientId: "Iv1.almanac0test0gh", clientSecret: "0123456789abcdef0123456789abcdef01234567" };
  const approver = new Approver<GitHubUser>({ id: 1, login: "octocat", emails: [] });
  const users = new Map<string, GitHubUser>();
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, { login: string; scope: string }>();
  const calls: string[] = [];

  const fake = await serve((req, url, body, host): Answer => {
    calls.push(`${req.method} ${host}${url.pathname}`);
    const q = url.searchParams;
    if (host === "github.com" && req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      if (q.get("client_id") !== client.clientId) return { status: 404, text: "Not Found" };
      const to = q.get("redirect_uri") ?? redirectUri;
      // "The redirect_uri must match the registered callback URL's host and port, and its path must be a subdirectory."
      const reg = new URL(redirectUri);
      const asked = URL.parse(to);
      if (!asked || asked.origin !== reg.origin || !asked.pathname.startsWith(reg.pathname)) {
        return redirect(redirectUri, {
          error: "redirect_uri_mismatch",
          error_description: "The redirect_uri MUST match the registered callback URL for this application.",
          error_uri: `${GITHUB_TROUBLESHOOTING}#redirect-uri-mismatch`,
          ...(q.has("state") && { state: q.get("state") as string }),
        });
      }
      const state = q.has("state") ? { state: q.get("state") as string } : {};
      if (approver.declines()) {
        return redirect(to, {
          error: "access_denied",
          error_description: "The user has denied your application access.",
          error_uri: `${GITHUB_TROUBLESHOOTING}#access-denied`,
          ...state,
        });
      }
      const code = randomBytes(10).toString("hex");
      const user = approver.user;
      users.set(user.login, user);
      codes.set(code, grantOf(q, to, user.login, (q.get("scope") ?? "").split(/[ ,]+/).join(",")));
      return redirect(to, { code, ...state });
    }
    if (host === "github.com" && req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const form = new URLSearchParams(body);
      const json = (req.headers.accept ?? "").includes("application/json");
      // Errors are 200s with an `error` member (form-encoded unless JSON was asked for).
      const answer = (fields: Record<string, string>): Answer =>
        json
          ? { status: 200, json: fields }
          : {
              status: 200,
              text: new URLSearchParams(fields).toString(),
              headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
            };
      const c = clientOf(req, form);
      if (c.id !== client.clientId || c.secret !== client.clientSecret) {
        return answer({
          error: "incorrect_client_credentials",
          error_description: "The client_id and/or client_secret passed are incorrect.",
          error_uri: `${GITHUB_TROUBLESHOOTING}#incorrect-client-credentials`,
        });
      }
      const code = form.get("code") ?? "";
      const grant = codes.get(code);
      codes.delete(code); // a code works once
      const badCode = {
        error: "bad_verification_code",
        error_description: "The code passed is incorrect or expired.",
        error_uri: `${GITHUB_TROUBLESHOOTING}#bad-verification-code`,
      };
      if (!grant || grant.expiresAt < Date.now() || !pkceHolds(grant.challenge, form.get("code_verifier"))) {
        return answer(badCode);
      }
      if (form.has("redirect_uri") && form.get("redirect_uri") !== grant.redirectUri) {
        return answer({
          error: "redirect_uri_mismatch",
          error_description: "The redirect_uri MUST match the registered callback URL for this application.",
          error_uri: `${GITHUB_TROUBLESHOOTING}#redirect-uri-mismatch2`,
        });
      }
      const accessToken = token("gho_");
      tokens.set(accessToken, { login: grant.subject, scope: grant.scope });
      return answer({ access_token: accessToken, token_type: "bearer", scope: grant.scope });
    }
    if (host === "api.github.com" && req.method === "GET" && ["/user", "/user/emails"].includes(url.pathname)) {
      // "All API requests MUST include a valid User-Agent header."
      if (!req.headers["user-agent"]) {
        return {
          status: 403,
          text: "Request forbidden by administrative rules. Please make sure your request has a User-Agent header.",
        };
      }
      const bearer = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
      const t = tokens.get(bearer);
      const u = t && users.get(t.login);
      if (!t || !u) {
        return {
          status: 401,
          json: { message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" },
        };
      }
      if (url.pathname === "/user/emails") {
        if (!t.scope.split(",").some((s) => s === "user:email" || s === "user")) {
          return {
            status: 404,
            json: {
              message: "Not Found",
              documentation_url:
                "https://docs.github.com/rest/users/emails#list-email-addresses-for-the-authenticated-user",
              status: "404",
            },
          };
        }
        return { status: 200, json: u.emails };
      }
      return {
        status: 200,
        json: {
          login: u.login,
          id: u.id,
          node_id: `MDQ6VXNlcj${u.id}`,
          avatar_url: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
          html_url: `https://github.com/${u.login}`,
          type: "User",
          site_admin: false,
          name: u.name ?? null,
          company: null,
          blog: "",
          location: null,
          email: u.email ?? null,
          hireable: null,
          bio: null,
          twitter_username: null,
          public_repos: 2,
          public_gists: 1,
          followers: 20,
          following: 0,
          created_at: "2008-01-14T04:33:35Z",
          updated_at: "2008-01-14T04:33:35Z",
        },
      };
    }
    return { status: 404, json: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } };
  });
  return provider(fake, { ...client, redirectUri }, calls, approver, GITHUB_ORIGINS);
}

// ---------------------------------------------------------------------------------------------
// Google

export interface GoogleUser {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
  /** Google Workspace domain, when the account belongs to one. */
  hd?: string;
}

export interface GoogleFake extends Fake, Client {
  setUser(user: GoogleUser): void;
  denyNext(): void;
  calls: string[];
  /** An ID token Google would issue this client for `user` (signed with the key its key set serves). */
  idTokenFor(user: GoogleUser): string;
}

const GOOGLE_ORIGINS = [
  "https://accounts.google.com",
  "https://oauth2.googleapis.com",
  "https://openidconnect.googleapis.com",
  "https://www.googleapis.com",
];
const GOOGLE_SCOPES: Record<string, string> = {
  email: "https://www.googleapis.com/auth/userinfo.email",
  profile: "https://www.googleapis.com/auth/userinfo.profile",
  openid: "openid",
};

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

export async function startGoogleFake(redirectUri: string): Promise<GoogleFake & { unroute: () => void }> {
  const client = {
    clientId: "123456789012-almanactest.apps.googleusercontent.com",
    clientSecret: "GOCSPX-almanac-test-secret",
  };
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = createHmac("sha1", "kid").update(String(Date.now())).digest("hex");
  const jwk = { ...publicKey.export({ format: "jwk" }), alg: "RS256", use: "sig", kid };
  const approver = new Approver<GoogleUser>({
    sub: "100000000000000000001",
    email: "someone@gmail.com",
    email_verified: true,
  });
  const users = new Map<string, GoogleUser>();
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, string>();
  const calls: string[] = [];

  const idToken = (u: GoogleUser, accessToken: string, nonce?: string) => {
    const now = Math.floor(Date.now() / 1000);
    const half = createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url");
    const claims = {
      iss: "https://accounts.google.com",
      azp: client.clientId,
      aud: client.clientId,
      sub: u.sub,
      ...(u.hd && { hd: u.hd }),
      email: u.email,
      email_verified: u.email_verified,
      at_hash: half,
      ...(nonce && { nonce }),
      ...(u.name && { name: u.name, given_name: u.name.split(" ")[0] }),
      picture: "https://lh3.googleusercontent.com/a/default-user=s96-c",
      iat: now,
      exp: now + 3600,
    };
    const input = `${b64url({ alg: "RS256", kid, typ: "JWT" })}.${b64url(claims)}`;
    return `${input}.${sign("sha256", Buffer.from(input), privateKey).toString("base64url")}`;
  };

  const fake = await serve((req, url, body, host): Answer => {
    calls.push(`${req.method} ${host}${url.pathname}`);
    const q = url.searchParams;
    if (host === "accounts.google.com" && req.method === "GET" && url.pathname === "/o/oauth2/v2/auth") {
      // Google shows its own error page (400) for an unknown client or an unregistered redirect URI.
      if (q.get("client_id") !== client.clientId) return { status: 401, text: "Error 401: invalid_client" };
      if (q.get("redirect_uri") !== redirectUri) return { status: 400, text: "Error 400: redirect_uri_mismatch" };
      if (q.get("response_type") !== "code") return { status: 400, text: "Error 400: invalid_request" };
      const to = q.get("redirect_uri") as string;
      const state = q.has("state") ? { state: q.get("state") as string } : {};
      if (approver.declines()) {
        return redirect(to, { error: "access_denied", ...state });
      }
      const scopes = (q.get("scope") ?? "").split(" ").map((s) => GOOGLE_SCOPES[s] ?? s);
      const code = `4/0A${randomBytes(30).toString("base64url")}`;
      const user = approver.user;
      users.set(user.sub, user);
      codes.set(code, grantOf(q, to, user.sub, scopes.join(" ")));
      return redirect(to, { ...state, code, scope: scopes.join(" "), authuser: "0", prompt: "consent" });
    }
    if (host === "oauth2.googleapis.com" && req.method === "POST" && url.pathname === "/token") {
      const form = new URLSearchParams(body);
      const c = clientOf(req, form);
      if (c.id !== client.clientId || c.secret !== client.clientSecret) {
        return { status: 401, json: { error: "invalid_client", error_description: "Unauthorized" } };
      }
      if (form.get("grant_type") !== "authorization_code") {
        return { status: 400, json: { error: "unsupported_grant_type", error_description: "Invalid grant_type: " } };
      }
      const code = form.get("code") ?? "";
      const grant = codes.get(code);
      codes.delete(code);
      if (!grant || grant.expiresAt < Date.now()) {
        return { status: 400, json: { error: "invalid_grant", error_description: "Bad Request" } };
      }
      if (form.get("redirect_uri") !== grant.redirectUri) {
        return { status: 400, json: { error: "redirect_uri_mismatch", error_description: "Bad Request" } };
      }
      if (!pkceHolds(grant.challenge, form.get("code_verifier"))) {
        return { status: 400, json: { error: "invalid_grant", error_description: "Missing code verifier." } };
      }
      const u = users.get(grant.subject) as GoogleUser;
      const accessToken = `ya29.${randomBytes(48).toString("base64url")}`;
      tokens.set(accessToken, u.sub);
      return {
        status: 200,
        headers: { "cache-control": "no-cache, no-store, max-age=0, must-revalidate", pragma: "no-cache" },
        json: {
          access_token: accessToken,
          expires_in: 3599,
          scope: grant.scope,
          token_type: "Bearer",
          id_token: idToken(u, accessToken, grant.nonce),
        },
      };
    }
    if (host === "www.googleapis.com" && req.method === "GET" && url.pathname === "/oauth2/v3/certs") {
      return { status: 200, json: { keys: [jwk] }, headers: { "cache-control": "public, max-age=21600" } };
    }
    if (host === "openidconnect.googleapis.com" && url.pathname === "/v1/userinfo") {
      const sub = tokens.get(/^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "");
      const u = sub ? users.get(sub) : undefined;
      if (!u) {
        return {
          status: 401,
          headers: { "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
          json: { error: "invalid_request", error_description: "Invalid Credentials" },
        };
      }
      return {
        status: 200,
        json: { sub: u.sub, name: u.name, picture: "", email: u.email, email_verified: u.email_verified },
      };
    }
    return { status: 404, text: "Not Found" };
  });
  const idTokenFor = (u: GoogleUser) => idToken(u, `ya29.${randomBytes(48).toString("base64url")}`);
  return { ...provider(fake, { ...client, redirectUri }, calls, approver, GOOGLE_ORIGINS), idTokenFor };
}
