import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateAuth } from "../../src/features/account/auth.js";
import { errorOf } from "../helpers/app.js";
import type { FormAgent } from "../support/form-agent.js";
import { fakeProvider, startGitHubFake, startGoogleFake } from "../support/oauth-upstreams.js";
import { accountApp, accountPage, clientPerTest, requestCode } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";
const SESSION = "almanac.session_token";

describe("sign-in attacks (GitHub through its local fake)", () => {
  const github = fakeProvider(() => startGitHubFake(`${PUBLIC_URL}/api/auth/callback/github`));
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({ GITHUB_CLIENT_ID: github().clientId, GITHUB_CLIENT_SECRET: github().clientSecret }),
  });
  const { request, browser, signIn: signedIn } = clientPerTest(acct, PUBLIC_URL, "192.0.2");
  const gitHubUser = (id: number, email: string, verified = true) =>
    github().setUser({
      id,
      login: `user-${id}`,
      email: null,
      emails: [{ email, primary: true, verified, visibility: null }],
    });
  const through = async (agent: FormAgent, res: Response, from: string) => {
    const { res: last, url } = await agent.follow(res, from);
    return { url, html: await last.text() };
  };
  const signInWithGitHub = async (agent: FormAgent) =>
    through(agent, await agent.post("/account/sign-in-with/github", {}), "/account/sign-in-with/github");
  const linkGitHub = async (agent: FormAgent) =>
    through(
      agent,
      await agent.post("/account/link/github", { csrf: (await accountPage(agent)).csrf }),
      "/account/link/github",
    );

  describe("account linking", () => {
    it("an identity carrying another account's address, linked to the attacker's own account, leads only there", async () => {
      const victim = await signedIn("linked-victim@example.test");
      const attacker = await signedIn("linker@example.test");
      gitHubUser(7001, "linked-victim@example.test");
      expect((await linkGitHub(attacker)).url).toBe(`${PUBLIC_URL}/account?notice=linked`);

      const back = await signInWithGitHub(browser());
      expect(back.html).toContain("linker@example.test");
      expect(back.html).not.toContain("linked-victim@example.test");
      const victimPage = (await accountPage(victim)).html;
      expect(victimPage).toContain("No external identity is linked.");
      // The attacker's account keeps its own address (provider data never overwrites it).
      expect((await accountPage(attacker)).html).toContain('<span class="who">linker@example.test</span>');
    });

    it("a link completes only for the session that started it: signed out meanwhile, nothing is linked", async () => {
      gitHubUser(7002, "gone@example.test");
      const agent = await signedIn("left@example.test");
      const started = await agent.post("/account/link/github", { csrf: (await accountPage(agent)).csrf });
      const approved = await agent.get(started.headers.get("location") as string);
      const callback = approved.headers.get("location") as string;
      await agent.post("/account/sign-out", { csrf: (await accountPage(agent)).csrf });
      const landed = await through(agent, await agent.get(callback), callback);
      expect(landed.url).toBe(`${PUBLIC_URL}/account?error=unable_to_link_account`);
      expect(agent.cookie(SESSION)).toBeUndefined();
      const again = await signedIn("left@example.test");
      expect((await accountPage(again)).html).toContain("No external identity is linked.");
    });

    // A session left open on a shared computer, or a stolen cookie, could add the taker's own
    // identity and keep a way in after the session ends; removing one already asked for a recent
    // sign-in, adding one did not.
    it("linking needs a recent sign-in, as unlinking does: an older session is told to sign in again", async () => {
      gitHubUser(7006, "backdoor@example.test");
      const agent = await signedIn("stale@example.test");
      const id = (await linkGitHub(agent)).html.match(/identities\/([^/]+)\/unlink/)?.[1];
      expect(id).toBeDefined();
      await sql`update auth_session set "createdAt" = ${new Date(Date.now() - 25 * 3600_000).toISOString()}
        where "userId" = (select id from auth_user where email = ${"stale@example.test"})`.execute(
        acct.t.deps.database.db,
      );
      gitHubUser(7007, "backdoor2@example.test");
      for (const path of ["/account/link/github", `/account/identities/${id}/unlink`]) {
        const res = await agent.post(path, { csrf: (await accountPage(agent)).csrf });
        expect([path, res.status]).toEqual([path, 400]);
        expect(await res.text()).toContain("Sign out and in again to");
      }
      expect((await accountPage(agent)).html).toContain("GitHub <code>7006</code>");
      expect((await accountPage(agent)).html).not.toContain("7007");
    });

    it("an address in another case signs up as the account the e-mail code reaches, not a second one", async () => {
      gitHubUser(7003, "Mixed.Case@Example.test");
      const first = await signInWithGitHub(browser());
      expect(first.url).toBe(`${PUBLIC_URL}/account`);
      expect(first.html).toContain("mixed.case@example.test");
      const byCode = await signedIn("mixed.case@example.test");
      expect((await accountPage(byCode)).html).toContain("GitHub <code>7003</code>");
    });
  });

  describe("what a database leak would give away", () => {
    const tokens = async () =>
      (
        await sql<{ accessToken: string | null; refreshToken: string | null; idToken: string | null }>`
          select "accessToken", "refreshToken", "idToken" from auth_account where "providerId" = 'github'`.execute(
          acct.t.deps.database.db,
        )
      ).rows;

    // GitHub's OAuth-app tokens never expire: a copy of the database (a backup, a replica) was a
    // working key to every linked user's GitHub profile and private addresses. Almanac never calls
    // a provider after the sign-in, so it keeps none of its tokens.
    it("no provider token is stored at sign-up, link or later sign-in, and older ones are dropped at start", async () => {
      gitHubUser(7101, "tokens@example.test");
      await signInWithGitHub(browser());
      await signInWithGitHub(browser());
      gitHubUser(7102, "tokens-linked@example.test");
      await linkGitHub(await signedIn("tokens-owner@example.test"));
      const rows = await tokens();
      expect(rows.length).toBeGreaterThanOrEqual(2);
      expect(rows).toEqual(rows.map(() => ({ accessToken: null, refreshToken: null, idToken: null })));

      await sql`update auth_account set "accessToken" = 'gho_kept_by_an_older_version' where "providerId" = 'github'`.execute(
        acct.t.deps.database.db,
      );
      await migrateAuth(acct.t.deps);
      expect((await tokens()).every((r) => r.accessToken === null)).toBe(true);
    });
  });

  describe("session fixation", () => {
    it("a browser holding someone else's session gets a new session of its own at code sign-in", async () => {
      const attacker = await signedIn("fixer@example.test");
      const planted = attacker.cookie(SESSION) as string;
      const victim = browser();
      victim.setCookie(SESSION, planted);
      const code = await requestCode(victim, acct.smtp, "fixed@example.test");
      expect((await victim.post("/account/verify", { email: "fixed@example.test", code })).status).toBe(303);
      expect(victim.cookie(SESSION)).not.toBe(planted);
      expect((await accountPage(victim)).html).toContain('<span class="who">fixed@example.test</span>');
      // The planted session is still the attacker's alone: it never became the victim's.
      expect((await accountPage(attacker)).html).toContain('<span class="who">fixer@example.test</span>');
    });

    it("the same at a sign-in with an identity provider", async () => {
      const attacker = await signedIn("fixer2@example.test");
      const planted = attacker.cookie(SESSION) as string;
      gitHubUser(7004, "fixed2@example.test");
      const victim = browser();
      victim.setCookie(SESSION, planted);
      const landed = await signInWithGitHub(victim);
      expect(landed.html).toContain('<span class="who">fixed2@example.test</span>');
      expect(victim.cookie(SESSION)).not.toBe(planted);
      expect((await accountPage(attacker)).html).toContain('<span class="who">fixer2@example.test</span>');
    });

    it("a made-up or unsigned session cookie is no session", async () => {
      const agent = browser();
      agent.setCookie(SESSION, "made-up-token");
      expect(await (await agent.get("/account")).text()).toContain("Send me a code");
      const res = await agent.post("/account/keys", { name: "x", csrf: "x" });
      expect(res.status).toBe(401);
    });
  });

  describe("CSRF on account actions", () => {
    it("every state-changing form refuses a cross-site post and a foreign form token, and nothing changes", async () => {
      const owner = await signedIn("csrf-owner@example.test");
      const { csrf } = await accountPage(owner);
      await owner.post("/account/keys", { csrf, name: "kept" });
      const keyId = /href="\/account\/keys\/([^/"]+)\/revoke"/.exec((await accountPage(owner)).html)?.[1];
      expect(keyId).toBeDefined();
      const foreign = (await accountPage(await signedIn("csrf-other@example.test"))).csrf;
      const forms: [string, Record<string, string>][] = [
        ["/account/keys", { name: "planted" }],
        [`/account/keys/${keyId}/revoke`, {}],
        [`/account/keys/${keyId}/roll`, { grace: "0" }],
        [`/account/keys/${keyId}/update`, { name: "renamed", expires: "keep" }],
        ["/account/link/github", {}],
        ["/account/identities/any/unlink", {}],
        ["/account/sign-out", {}],
      ];
      for (const [path, form] of forms) {
        const crossSite = await owner.post(
          path,
          { ...form, csrf },
          { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" },
        );
        expect([path, crossSite.status, (await errorOf(crossSite)).error.reason]).toEqual([path, 403, "CROSS_SITE"]);
        const forged = await owner.post(path, { ...form, csrf: foreign });
        expect([path, forged.status, (await errorOf(forged)).error.reason]).toEqual([path, 403, "CSRF_TOKEN"]);
      }
      // The page-level sign-in forms carry no token (there is no session yet) but are same-origin only.
      for (const [path, form] of [
        ["/account/sign-in", { email: "csrf-owner@example.test" }],
        ["/account/verify", { email: "csrf-owner@example.test", code: "000000" }],
        ["/account/sign-in/restart", {}],
        ["/account/sign-in-with/github", {}],
      ] as const) {
        const res = await browser().post(path, form, {
          Origin: "https://evil.example",
          "Sec-Fetch-Site": "cross-site",
        });
        expect([path, res.status, (await errorOf(res)).error.reason]).toEqual([path, 403, "CROSS_SITE"]);
      }
      const page = (await accountPage(owner)).html;
      expect(page).toContain('<span class="who">csrf-owner@example.test</span>');
      expect(page).toContain("kept");
      expect(page).not.toMatch(/planted|renamed|Revoked|was rolled/);
      expect(page).toContain("No external identity is linked.");
    });
  });

  describe("redirects after a provider", () => {
    const start = (body: Record<string, unknown>) =>
      request(`${PUBLIC_URL}/api/auth/sign-in/social`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
        body: JSON.stringify({ provider: "github", ...body }),
      });

    it.each([
      "https://evil.example/after",
      "//evil.example/after",
      "/\\evil.example/after",
      `${PUBLIC_URL}@evil.example/after`,
      "http://localhost:8080.evil.example/after",
      "javascript:alert(1)",
    ])("a foreign callback URL (%s) is refused before the provider is asked", async (url) => {
      const cases = [
        [{ callbackURL: url }, "INVALID_CALLBACK_URL", "Invalid callbackURL"],
        [{ callbackURL: "/account", errorCallbackURL: url }, "INVALID_ERROR_CALLBACK_URL", "Invalid errorCallbackURL"],
        [
          { callbackURL: "/account", newUserCallbackURL: url },
          "INVALID_NEW_USER_CALLBACK_URL",
          "Invalid newUserCallbackURL",
        ],
      ] as const;
      for (const [body, reason, message] of cases) {
        const res = await start(body);
        expect(res.status).toBe(403);
        expect((await errorOf(res)).error).toMatchObject({ code: "forbidden", reason, message });
      }
    });

    it("every redirect of a provider sign-in stays on the public origin, success or failure", async () => {
      gitHubUser(7005, "stays@example.test");
      for (const deny of [false, true]) {
        if (deny) github().denyNext();
        const agent = browser();
        const seen: string[] = [];
        let res = await agent.post("/account/sign-in-with/github", {});
        let url = `${PUBLIC_URL}/account/sign-in-with/github`;
        while (res.status >= 300 && res.status < 400) {
          url = new URL(res.headers.get("location") as string, url).toString();
          seen.push(url);
          res = await agent.get(url);
        }
        // The app's own redirects are to PUBLIC_URL; the only other stop is the provider's page.
        for (const stop of seen)
          expect(stop.startsWith(`${PUBLIC_URL}/`) || stop.startsWith("https://github.com/")).toBe(true);
        expect(new URL(url).origin).toBe(PUBLIC_URL);
      }
    });
  });
});

describe("an ID token handed in directly (Google through its local fake)", () => {
  const google = fakeProvider(() => startGoogleFake(`${PUBLIC_URL}/api/auth/callback/google`));
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({ GOOGLE_CLIENT_ID: google().clientId, GOOGLE_CLIENT_SECRET: google().clientSecret }),
  });

  // better-auth's idToken branch (for native apps holding a token from Google's SDK) signs in with
  // a token alone: no browser-bound state, no nonce required, good for the token's hour. Almanac's
  // sign-in is the browser round trip; a token that leaked from anywhere must not open an account.
  it("is refused, and signs in to nothing, even for a genuine token of a linked identity", async () => {
    const user = { sub: "118000000000000000042", email: "token-holder@example.test", email_verified: true };
    google().setUser(user);
    const owner = acct.agent();
    const done = await owner.follow(
      await owner.post("/account/sign-in-with/google", {}),
      "/account/sign-in-with/google",
    );
    expect(await done.res.text()).toContain("token-holder@example.test");

    const res = await acct.t.app.request(`${PUBLIC_URL}/api/auth/sign-in/social`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
      body: JSON.stringify({ provider: "google", idToken: { token: google().idTokenFor(user) } }),
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({
      code: "invalid_body",
      message: "Sign-in with an ID token is not offered: sign in through the provider's page.",
    });
    expect(res.headers.getSetCookie().some((c) => c.includes("session_token"))).toBe(false);
  });
});
