import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { FormAgent } from "../support/form-agent.js";
import {
  fakeProvider,
  type GitHubFake,
  type GoogleFake,
  startGitHubFake,
  startGoogleFake,
} from "../support/oauth-upstreams.js";
import { accountApp, accountPage, authSweep, clientPerTest } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";
const STALE =
  "did not match a sign-in started in this browser (it had expired or was already used): nothing changed. Start again.";

/** What each provider's tests need: its env, and users with a verified, an unverified or no address. */
interface Provider {
  id: "github" | "google";
  name: string;
  start(): Promise<(GitHubFake | GoogleFake) & { unroute: () => void }>;
  env(fake: GitHubFake | GoogleFake): Record<string, string>;
  /** Makes `key` the next user to approve; returns the id the account page shows for the identity. */
  as(fake: GitHubFake | GoogleFake, key: number, email: string | null, verified: boolean): string;
  /** Where the provider's authorization page is. */
  authorize: string;
  /** The requests a sign-in makes of the provider (the browser's, then the server's). */
  calls: string[];
}

const PROVIDERS: Provider[] = [
  {
    id: "github",
    name: "GitHub",
    start: () => startGitHubFake(`${PUBLIC_URL}/api/auth/callback/github`),
    env: (f) => ({ GITHUB_CLIENT_ID: f.clientId, GITHUB_CLIENT_SECRET: f.clientSecret }),
    as: (f, key, email, verified) => {
      // The public profile address stays private (null): the address comes from /user/emails.
      (f as GitHubFake).setUser({
        id: 5_000_000 + key,
        login: `gh-user-${key}`,
        name: `GitHub User ${key}`,
        email: null,
        emails: email
          ? [
              { email, primary: true, verified, visibility: "private" },
              {
                email: `${key}+gh-user-${key}@users.noreply.github.com`,
                primary: false,
                verified: true,
                visibility: null,
              },
            ]
          : [],
      });
      return String(5_000_000 + key);
    },
    authorize: "https://github.com/login/oauth/authorize",
    calls: [
      "GET github.com/login/oauth/authorize",
      "POST github.com/login/oauth/access_token",
      "GET api.github.com/user",
      "GET api.github.com/user/emails",
    ],
  },
  {
    id: "google",
    name: "Google",
    start: () => startGoogleFake(`${PUBLIC_URL}/api/auth/callback/google`),
    env: (f) => ({ GOOGLE_CLIENT_ID: f.clientId, GOOGLE_CLIENT_SECRET: f.clientSecret }),
    as: (f, key, email, verified) => {
      const sub = String(110_000_000_000_000_000_000n + BigInt(key));
      (f as GoogleFake).setUser({ sub, email: email ?? "", email_verified: verified, name: `Google User ${key}` });
      return sub;
    },
    authorize: "https://accounts.google.com/o/oauth2/v2/auth",
    // The address comes from the token endpoint's id_token.
    calls: ["GET accounts.google.com/o/oauth2/v2/auth", "POST oauth2.googleapis.com/token"],
  },
];

for (const p of PROVIDERS) {
  describe(`${p.name} through a local fake of its OAuth endpoints`, () => {
    const fake = fakeProvider(p.start);
    const acct = accountApp(PUBLIC_URL, { env: () => p.env(fake()) });
    const { browser, signIn: signedIn } = clientPerTest(acct, PUBLIC_URL, "198.51.100");
    const as = (key: number, email: string | null, verified = true) => p.as(fake(), key, email, verified);

    /** Starts at `path` (sign-in-with or link) and walks to the provider and back, stopping before the app's callback. */
    async function toCallback(agent: FormAgent, path: string, form: Record<string, string> = {}): Promise<string> {
      const started = await agent.post(path, form);
      expect(started.status).toBe(303);
      const authorize = started.headers.get("location") as string;
      expect(authorize.startsWith(`${p.authorize}?`)).toBe(true);
      const approved = await agent.get(authorize);
      expect(approved.status).toBe(302);
      const callback = approved.headers.get("location") as string;
      expect(callback.startsWith(`${PUBLIC_URL}/api/auth/callback/${p.id}?`)).toBe(true);
      return callback;
    }
    /** GETs the callback as `agent` and follows the redirects; the final page and where it is. */
    async function land(agent: FormAgent, callback: string) {
      const { res, url } = await agent.follow(await agent.get(callback), callback);
      return { url, status: res.status, html: await res.text() };
    }
    const signInWith = async (agent: FormAgent) =>
      land(agent, await toCallback(agent, `/account/sign-in-with/${p.id}`));
    const link = async (agent: FormAgent) =>
      land(agent, await toCallback(agent, `/account/link/${p.id}`, { csrf: (await accountPage(agent)).csrf }));
    const session = (agent: FormAgent) => agent.cookie("almanac.session_token");

    it("signs up with a verified address, and the identity signs in to that account again", async () => {
      const id = as(1, `signup-${p.id}@example.test`);
      const first = browser();
      const done = await signInWith(first);
      expect(done.url).toBe(`${PUBLIC_URL}/account`);
      expect(done.html).toContain("Your account");
      expect(done.html).toContain(`signup-${p.id}@example.test`);
      expect(done.html).toContain(`${p.name} <code>${id}</code>`);

      const again = browser();
      const back = await signInWith(again);
      expect(back.html).toContain(`signup-${p.id}@example.test`);
      expect(session(again)).toBeDefined();
      // better-auth called the provider's own endpoints (routed to the fake), nothing else.
      expect(new Set(fake().calls)).toEqual(new Set(p.calls));
    });

    it("links to an account signed in by e-mail code, even under another address; it then signs in to it", async () => {
      const id = as(2, `elsewhere-${p.id}@mail.example`);
      const agent = await signedIn(`linker-${p.id}@example.test`);
      const linked = await link(agent);
      expect(linked.url).toBe(`${PUBLIC_URL}/account?notice=linked`);
      expect(linked.html).toContain("The identity was linked.");
      expect(linked.html).toContain(`${p.name} <code>${id}</code>`);

      const fresh = browser();
      const back = await signInWith(fresh);
      expect(back.html).toContain(`linker-${p.id}@example.test`);
      expect(back.html).not.toContain(`elsewhere-${p.id}@mail.example</`);
    });

    it("a plan chosen before signing in (?buy=pro) comes back with the sign-in, marked on the account page", async () => {
      as(21, `buyer-${p.id}@example.test`);
      const agent = browser();
      const page = await (await agent.get("/account?buy=pro")).text();
      expect(page).toContain('<input type="hidden" name="buy" value="pro"/>');
      const done = await land(agent, await toCallback(agent, `/account/sign-in-with/${p.id}`, { buy: "pro" }));
      expect(done.url).toBe(`${PUBLIC_URL}/account?buy=pro#plans`);
      expect(done.html).toContain(`buyer-${p.id}@example.test`);
      // Anything but a paid plan's name is dropped.
      as(22, `elsewhere-${p.id}@example.test`);
      const other = browser();
      const back = await land(
        other,
        await toCallback(other, `/account/sign-in-with/${p.id}`, { buy: "//evil.example" }),
      );
      expect(back.url).toBe(`${PUBLIC_URL}/account`);
    });

    it("an identity whose verified address has an account does not sign in to it (no implicit linking)", async () => {
      await signedIn(`owner-${p.id}@example.test`);
      as(3, `owner-${p.id}@example.test`);
      const stranger = browser();
      const tried = await signInWith(stranger);
      expect(tried.url).toBe(`${PUBLIC_URL}/account?error=account_not_linked`);
      expect(tried.html).toContain("No account has this identity linked yet.");
      expect(session(stranger)).toBeUndefined();
    });

    it.each([
      ["an unverified address", 4, `unverified-${p.id}@example.test`],
      ["no address at all", 8, null],
    ] as const)("an identity with %s makes no account, and the page says why", async (_, key, email) => {
      as(key, email, false);
      const agent = browser();
      const tried = await signInWith(agent);
      expect(tried.url).toMatch(new RegExp(`^${PUBLIC_URL}/account\\?error=(email_not_found|unable_to_create_user)$`));
      expect(tried.html).toContain("has not verified a usable e-mail address for this identity");
      expect(session(agent)).toBeUndefined();
    });

    it("an identity without a verified address may still be linked explicitly, and then signs in to that account", async () => {
      const id = as(9, `unverified-link-${p.id}@example.test`, false);
      const agent = await signedIn(`explicit-${p.id}@example.test`);
      const linked = await link(agent);
      expect(linked.url).toBe(`${PUBLIC_URL}/account?notice=linked`);
      expect(linked.html).toContain(`${p.name} <code>${id}</code>`);
      const back = await signInWith(browser());
      expect(back.html).toContain(`explicit-${p.id}@example.test`);
    });

    it("a sign-in completes while expired rows are swept, and its state goes once used", async () => {
      as(10, `swept-${p.id}@example.test`);
      const agent = browser();
      const callback = await toCallback(agent, `/account/sign-in-with/${p.id}`);
      const state = new URL(callback).searchParams.get("state");
      const sweeps = Promise.all([authSweep(acct.t.deps).runOnce(), authSweep(acct.t.deps).runOnce()]);
      const done = await land(agent, callback);
      await sweeps;
      expect(done.html).toContain(`swept-${p.id}@example.test`);
      const left = await sql`select 1 from auth_verification where identifier = ${`auth-state:${state}`}`.execute(
        acct.t.deps.database.db,
      );
      expect(left.rows).toHaveLength(0);
    });

    it("a callback after its state expired and was swept is refused on the account page", async () => {
      as(11, `late-${p.id}@example.test`);
      const agent = browser();
      const callback = await toCallback(agent, `/account/sign-in-with/${p.id}`);
      const state = `auth-state:${new URL(callback).searchParams.get("state")}`;
      await sql`update auth_verification set "expiresAt" = ${new Date(Date.now() - 60_000).toISOString()}
        where identifier = ${state}`.execute(acct.t.deps.database.db);
      expect((await authSweep(acct.t.deps).runOnce()).verifications).toBe(1);
      const late = await land(agent, callback);
      expect(late.url).toBe(`${PUBLIC_URL}/account?error=state_mismatch`);
      expect(late.html).toContain(STALE);
      expect(session(agent)).toBeUndefined();
    });

    it("a callback made for another browser's sign-in signs this one in to nothing (state mismatch)", async () => {
      // Login CSRF: the attacker approves at the provider as themselves and hands the victim the callback.
      as(5, `attacker-${p.id}@example.test`);
      const callback = await toCallback(browser(), `/account/sign-in-with/${p.id}`);
      const victim = browser();
      const landed = await land(victim, callback);
      expect(landed.url).toBe(`${PUBLIC_URL}/account?error=state_mismatch`);
      expect(landed.status).toBe(200);
      expect(landed.html).toContain(STALE);
      expect(session(victim)).toBeUndefined();
    });

    it("a replayed callback is refused on the account page, and the session it made stays as it was", async () => {
      as(6, `replay-${p.id}@example.test`);
      const agent = browser();
      const callback = await toCallback(agent, `/account/sign-in-with/${p.id}`);
      expect((await land(agent, callback)).html).toContain(`replay-${p.id}@example.test`);
      const before = session(agent);
      const again = await land(agent, callback);
      expect(again.url).toBe(`${PUBLIC_URL}/account?error=state_mismatch`);
      expect(again.status).toBe(200);
      expect(session(agent)).toBe(before);
      // A replay from a browser without the state cookie ends on the same page.
      const other = browser();
      const elsewhere = await land(other, callback);
      expect(elsewhere.url).toBe(`${PUBLIC_URL}/account?error=state_mismatch`);
      expect(elsewhere.html).toContain(STALE);
      expect(session(other)).toBeUndefined();
    });

    it("a link whose callback is replayed or declined at the provider links nothing more", async () => {
      as(7, `declined-${p.id}@example.test`);
      const agent = await signedIn(`decliner-${p.id}@example.test`);
      fake().denyNext();
      const declined = await link(agent);
      expect(declined.url).toMatch(new RegExp(`^${PUBLIC_URL}/account\\?error=access_denied(&|$)`));
      expect(declined.html).toContain("Linking did not complete. Try again.");
      expect(declined.html).toContain("No external identity is linked.");

      const callback = await toCallback(agent, `/account/link/${p.id}`, { csrf: (await accountPage(agent)).csrf });
      expect((await land(agent, callback)).url).toBe(`${PUBLIC_URL}/account?notice=linked`);
      const replayed = await land(agent, callback);
      expect(replayed.url).toBe(`${PUBLIC_URL}/account?error=state_mismatch`);
      expect(replayed.html).toContain(STALE);
    });
  });
}
