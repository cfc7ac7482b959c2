import { describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import type { FormAgent } from "../support/form-agent.js";
import { accountApp, accountPage } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];
const keyIdsOf = (html: string) => [...html.matchAll(/href="\/account\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1]);

/** POSTs a key form and follows the 303 (Post/Redirect/Get); returns the page after the redirect. */
async function postAndFollow(agent: FormAgent, url: string, form: Record<string, string>) {
  const res = await agent.post(url, form);
  expect(res.status).toBe(303);
  const { res: page } = await agent.follow(res, url);
  expect(page.status).toBe(200);
  return page.text();
}

describe("keys on the account page", () => {
  const acct = accountApp(PUBLIC_URL);

  it("creates a key shown once, lists it by prefix…last4, rolls it and revokes it", async () => {
    const agent = await acct.signIn("keys@example.test");
    let { csrf } = await accountPage(agent);
    const created = await agent.post("/account/keys", { name: "prod server", csrf });
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/account?notice=created");
    const html = await (await agent.follow(created, "/account/keys")).res.text();
    const key = newKeyOf(html);
    expect(key).toMatch(/^alm_/);
    expect(html).toContain("prod server");
    const [info] = await acct.t.deps.keys.list(undefined).then((all) => all.filter((k) => k.name === "prod server"));
    expect(info).toBeDefined();
    expect(html).toContain(`${info?.prefix}…${info?.last4}`);

    // Shown once: the next page view lists the key but not its plaintext.
    const again = await accountPage(agent);
    expect(again.html).not.toContain(key as string);
    expect(again.html).toContain(`${info?.prefix}…${info?.last4}`);
    csrf = again.csrf;

    const replacement = newKeyOf(await postAndFollow(agent, `/account/keys/${info?.id}/roll`, { csrf }));
    expect(replacement).toMatch(/^alm_/);
    expect(replacement).not.toBe(key);
    expect(await acct.t.deps.keys.verify(key as string)).toMatchObject({ code: expect.not.stringMatching(/^VALID$/) });
    expect(await acct.t.deps.keys.verify(replacement as string)).toMatchObject({ kind: "verdict", code: "VALID" });

    const page = await accountPage(agent);
    const activeIds = keyIdsOf(page.html);
    expect(activeIds).toHaveLength(1);
    const revoked = await agent.post(`/account/keys/${activeIds[0]}/revoke`, { csrf: page.csrf });
    expect(revoked.status).toBe(303);
    const after = await (await agent.follow(revoked, "/account")).res.text();
    expect(after).toContain("The key was revoked.");
    expect(keyIdsOf(after)).toHaveLength(0);
    expect(await acct.t.deps.keys.verify(replacement as string)).toMatchObject({
      code: expect.not.stringMatching(/^VALID$/),
    });
  });

  it("another user's key id is 404 not_found for revoke and roll, and the key stays valid", async () => {
    const owner = await acct.signIn("owner@example.test");
    const ownerPage = await accountPage(owner);
    const key = newKeyOf(await postAndFollow(owner, "/account/keys", { name: "mine", csrf: ownerPage.csrf }));
    const [id] = keyIdsOf((await accountPage(owner)).html);

    const other = await acct.signIn("other@example.test");
    const otherPage = await accountPage(other);
    expect(otherPage.html).not.toContain("mine");
    for (const action of ["revoke", "roll"]) {
      const res = await other.post(`/account/keys/${id}/${action}`, { csrf: otherPage.csrf });
      expect(res.status).toBe(404);
      const body = await errorOf(res);
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toMatch(new RegExp(`^No (active )?key ${id} on this account\\.$`));
    }
    expect(await acct.t.deps.keys.verify(key as string)).toMatchObject({ kind: "verdict", code: "VALID" });
  });

  it("a cross-site POST changes nothing (403 forbidden), with or without the form token", async () => {
    const agent = await acct.signIn("target@example.test");
    const { csrf } = await accountPage(agent);
    const attempts: Record<string, string>[] = [
      { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" },
      { Origin: "https://evil.example" },
      { "Sec-Fetch-Site": "same-site", Origin: "http://sub.localhost:8080" },
      { Origin: "", "Sec-Fetch-Site": "" },
    ];
    for (const headers of attempts) {
      const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ""));
      const res = await agent.send("/account/keys", {
        method: "POST",
        body: new URLSearchParams({ name: "planted", csrf }).toString(),
        headers: { "Content-Type": "application/x-www-form-urlencoded", ...clean },
      });
      expect(res.status).toBe(403);
      const body = await errorOf(res);
      expect(body.error.code).toBe("forbidden");
      expect(body.error.reason).toBe("CROSS_SITE");
    }
    const signOut = await agent.post("/account/sign-out", { csrf }, { Origin: "https://evil.example" });
    expect(signOut.status).toBe(403);
    const page = await accountPage(agent);
    expect(page.html).toContain("target@example.test");
    expect(page.html).not.toContain("planted");
    const mine = await acct.t.deps.keys.list(undefined);
    expect(mine.some((k) => k.name === "planted")).toBe(false);
  });

  it("a same-origin POST without the session's form token is refused (403 forbidden, CSRF_TOKEN)", async () => {
    const agent = await acct.signIn("token@example.test");
    const otherAgent = await acct.signIn("token2@example.test");
    const othersToken = (await accountPage(otherAgent)).csrf;
    const forms: Record<string, string>[] = [{ name: "no-token" }, { name: "foreign-token", csrf: othersToken }];
    for (const form of forms) {
      const res = await agent.post("/account/keys", form);
      expect(res.status).toBe(403);
      const body = await errorOf(res);
      expect(body.error.code).toBe("forbidden");
      expect(body.error.reason).toBe("CSRF_TOKEN");
    }
    expect((await accountPage(agent)).html).not.toMatch(/no-token|foreign-token/);
  });

  it("a key action without a session is 401 unauthorized", async () => {
    const res = await acct.t.app.request("/account/keys", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: PUBLIC_URL },
      body: "name=x",
    });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).error.code).toBe("unauthorized");
  });

  // C1 controls (U+009B is a terminal's CSI: the name reaches the operator's `almanac keys list`)
  // and bidirectional overrides (a name shown reversed, on the page and in reminder mail) were taken.
  it.each([
    ["blank", "   "],
    ["a C1 control", "key\u009b31mred"],
    ["a bidi override", "\u202egpj.exe"],
    ["a bidi isolate", "a\u2066b"],
  ])("an unusable key name (%s) is a 400 on the page and creates nothing", async (_, name) => {
    const agent = await acct.signIn("names@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { name, csrf, permission: "vibe.classify" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({
      code: "invalid_body",
      message: "A key name is 1 to 64 printable characters.",
    });
    expect(keyIdsOf((await accountPage(agent)).html)).toHaveLength(0);
  });
});
