import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import type { FormAgent } from "../support/form-agent.js";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider.js";
import { accountApp, accountPage, requestCode } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

describe("linking an OIDC identity (real oidc-provider on 127.0.0.1)", () => {
  let idp: OidcTestProvider;
  beforeAll(async () => {
    idp = await startOidcProvider({
      redirectUris: [`${PUBLIC_URL}/api/auth/callback/oidc`, `${PUBLIC_URL}/api/auth/oauth2/callback/oidc`],
    });
  });
  afterAll(async () => {
    await idp?.close();
  });
  const acct = accountApp(PUBLIC_URL, {
    env: () => ({
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_NAME: "Test IdP",
    }),
  });

  async function link(agent: FormAgent) {
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/link/oidc", { csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(new RegExp(`^${idp.issuer}/`));
    return agent.follow(res, "/account/link/oidc");
  }

  it("signs in by e-mail code, links the identity, lists it, unlinks it", async () => {
    idp.setUser({ sub: "idp-ada", email: "ada-at-idp@idp.example", name: "Ada" });
    const agent = await acct.signIn("ada@example.test");
    const before = await accountPage(agent);
    expect(before.html).toContain("Link Test IdP");

    const { res, url } = await link(agent);
    expect(res.status).toBe(200);
    expect(url).toBe(`${PUBLIC_URL}/account?notice=linked`);
    const html = await res.text();
    expect(html).toContain("The identity was linked.");
    expect(html).toContain("Test IdP <code>idp-ada</code>");
    expect(html).not.toContain("Link Test IdP");

    const identityId = /action="\/account\/identities\/([^/]+)\/unlink"/.exec(html)?.[1];
    expect(identityId).toBeDefined();
    const { csrf } = await accountPage(agent);
    const unlinked = await agent.post(`/account/identities/${identityId}/unlink`, { csrf });
    expect(unlinked.status).toBe(303);
    const after = await (await agent.follow(unlinked, "/account")).res.text();
    expect(after).toContain("The identity was unlinked.");
    expect(after).not.toContain("idp-ada");
    expect(after).toContain("Link Test IdP");
  });

  it("linking requires being signed in", async () => {
    const res = await acct.agent().post("/account/link/oidc", { csrf: "x" });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).error.code).toBe("unauthorized");
  });

  it("an identity linked to one account cannot be linked to another", async () => {
    idp.setUser({ sub: "idp-shared", email: "shared@idp.example" });
    const first = await acct.signIn("first@example.test");
    expect((await link(first)).url).toBe(`${PUBLIC_URL}/account?notice=linked`);
    const second = await acct.signIn("second@example.test");
    const { res } = await link(second);
    const html = await res.text();
    expect(html).toContain("That identity is already linked to another account.");
    expect(html).not.toContain("idp-shared");
  });

  it("signing in with the IdP whose e-mail matches an existing account does not take it over", async () => {
    await acct.signIn("victim@example.test");
    idp.setUser({ sub: "idp-attacker", email: "victim@example.test" });
    const attacker = acct.agent();
    const started = await acct.t.app.request("/api/auth/sign-in/social", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
      body: JSON.stringify({ provider: "oidc", callbackURL: "/account" }),
    });
    expect(started.status).toBe(200);
    const { url: authUrl } = (await started.json()) as { url: string };
    // Carry better-auth's OAuth state cookie the way a browser would.
    for (const c of started.headers.getSetCookie()) {
      const [name = "", value = ""] = (c.split(";")[0] ?? "").split("=");
      attacker.setCookie(name, value);
    }
    const { url } = await attacker.follow(await attacker.get(authUrl), authUrl);
    expect(url).toContain("error=account_not_linked");
    expect(attacker.cookie("almanac.session_token")).toBeUndefined();
    const page = await attacker.get("/account");
    expect(await page.text()).not.toContain("victim@example.test");
  });

  it("the sign-in mail also works for an account that has a linked identity", async () => {
    idp.setUser({ sub: "idp-bea", email: "bea@idp.example" });
    const agent = await acct.signIn("bea@example.test");
    await link(agent);
    const again = acct.agent();
    const code = await requestCode(again, acct.smtp, "bea@example.test");
    expect((await again.post("/account/verify", { email: "bea@example.test", code })).status).toBe(303);
    expect(await (await again.get("/account")).text()).toContain("idp-bea");
  });

  it("signs in directly with a linked identity from the sign-in page", async () => {
    idp.setUser({ sub: "idp-cy", email: "cy@idp.example" });
    await link(await acct.signIn("cy@example.test"));
    const fresh = acct.agent();
    expect(await (await fresh.get("/account")).text()).toContain('action="/account/sign-in-with/oidc"');
    const started = await fresh.post("/account/sign-in-with/oidc", {});
    expect(started.status).toBe(303);
    const { res, url } = await fresh.follow(started, "/account/sign-in-with/oidc");
    expect(url).toBe(`${PUBLIC_URL}/account`);
    const html = await res.text();
    expect(html).toContain("Your account");
    expect(html).toContain("cy@example.test");
  });

  it("signs up directly with an identity whose verified e-mail has no account yet (issue 23.3)", async () => {
    idp.setUser({ sub: "idp-stranger", email: "stranger@idp.example", emailVerified: true });
    const stranger = acct.agent();
    const tried = await stranger.follow(
      await stranger.post("/account/sign-in-with/oidc", {}),
      "/account/sign-in-with/oidc",
    );
    expect(tried.url).toBe(`${PUBLIC_URL}/account`);
    const html = await tried.res.text();
    expect(html).toContain("Your account");
    expect(html).toContain("stranger@idp.example");
    expect(html).toContain("idp-stranger"); // the identity is linked to the new account
  });

  // A provider's "verified" address that is no address (padded, a trailing dot) made an account
  // named like an existing one (" victim@example.test"), which no code can reach.
  it.each([
    ["not verified", "unverified@idp.example", false],
    ["verified, but padded", " linked-victim@example.test", true],
    ["verified, but with a trailing dot", "linked-victim@example.test.", true],
  ] as const)("an identity whose e-mail is %s makes no account", async (_, email, emailVerified) => {
    idp.setUser({ sub: `idp-odd-${email}`, email, emailVerified });
    const agent = acct.agent();
    const tried = await agent.follow(await agent.post("/account/sign-in-with/oidc", {}), "/account/sign-in-with/oidc");
    expect(agent.cookie("almanac.session_token")).toBeUndefined();
    expect(await tried.res.text()).toContain("has not verified a usable e-mail address for this identity");
  });
});
