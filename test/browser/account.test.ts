import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserSite, CHROMIUM, NO_CHROMIUM, SHOTS, startBrowserSite } from "../support/browser.js";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider.js";
import type { SmtpTestServer } from "../support/smtp-server.js";

describe.skipIf(!existsSync(CHROMIUM))(`account page in Chromium${NO_CHROMIUM}`, () => {
  let site: BrowserSite;
  let smtp: SmtpTestServer;
  let idp: OidcTestProvider;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    site = await startBrowserSite(async (url) => {
      idp = await startOidcProvider({ redirectUris: [`${url}/api/auth/callback/oidc`] });
      idp.setUser({ sub: "idp-grace", email: "grace@idp.example", name: "Grace" });
      return {
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: idp.clientId,
        OIDC_CLIENT_SECRET: idp.clientSecret,
        OIDC_NAME: "Test IdP",
      };
    });
    ({ base, smtp } = site);
    const context = await site.browser.newContext();
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    page = await context.newPage();
  });

  afterAll(async () => {
    await site?.close();
    await idp?.close();
  });

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

  const classify = (key: string) =>
    fetch(`${base}/v1/vibe/classify`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ texts: ["What a lovely day"] }),
    }).then((r) => r.status);

  it("signs in with a mailed code, manages a key, links an identity and signs out", async () => {
    await page.goto(`${base}/account`);
    await shot("01-sign-in");
    await page.getByLabel("E-mail address").fill("grace@example.test");
    const before = smtp.messages.length;
    await page.getByRole("button", { name: "Send me a code" }).click();
    await page.getByLabel("Code").waitFor();
    const mail = await smtp.waitForMessage(
      (m) => m.to.includes("grace@example.test") && smtp.messages.indexOf(m) >= before,
    );
    const code = /\b(\d{6})\b/.exec(mail.text)?.[1] ?? "";
    await shot("02-code");
    await page.getByLabel("Code").fill(code);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Your account" }).waitFor();
    await shot("03-signed-in");

    // Create (Post/Redirect/Get): expiry and permission chosen in the form; shown once, focused, copyable.
    await page.getByLabel("New key name").fill("browser key");
    await page.getByLabel("Expires").selectOption("30d");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("The key was created.").waitFor();
    expect(new URL(page.url()).pathname).toBe("/account");
    const key = (await page.locator("#new-key").textContent()) ?? "";
    expect(key).toMatch(/^alm_/);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("new-key");
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    await expect.poll(() => page.getByRole("button", { name: "Copied" }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await page.getByRole("button", { name: "Copy curl command" }).click();
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    expect(curl).toContain(`Authorization: Bearer ${key}`);
    expect(curl).toContain(`${base}/v1/vibe/classify`);
    await shot("04-key-created");
    expect(await classify(key)).toBe(200);
    // A reload repeats nothing and no longer shows the key.
    await page.reload();
    expect(await page.locator("#new-key").count()).toBe(0);
    expect(await page.getByRole("link", { name: /Revoke key/ }).count()).toBe(1);
    expect(await page.getByRole("row", { name: /browser key/ }).textContent()).toMatch(/UTC.*1.*1.*99/s);

    // A duplicate name is refused with a clear message.
    await page.getByLabel("New key name").fill("browser key");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("You already have an active key with this name").waitFor();
    await page.goto(`${base}/account`);

    // Roll: a confirmation page with the grace period; 0 for a leak kills the old key at once.
    await page.getByRole("link", { name: "Roll key browser key" }).click();
    await page.getByRole("heading", { name: /Roll key/ }).waitFor();
    await page.getByLabel("The old key").selectOption("0");
    await shot("05a-roll-confirm");
    await page.getByRole("button", { name: "Roll key" }).click();
    await page.getByText("The key was rolled; here is its replacement.").waitFor();
    const rolled = (await page.locator("#new-key").textContent()) ?? "";
    expect(rolled).toMatch(/^alm_/);
    expect(rolled).not.toBe(key);
    await shot("05-key-rolled");
    expect(await classify(key)).toBe(401);
    expect(await classify(rolled)).toBe(200);

    // Revoke, after a confirmation page.
    await page.getByRole("link", { name: "Revoke key browser key" }).click();
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.getByText("The key was revoked.").waitFor();
    expect(await page.getByRole("link", { name: /Revoke key/ }).count()).toBe(0);
    await shot("06-key-revoked");
    expect(await classify(rolled)).toBe(401);

    // Link an OIDC identity (real provider, full redirect round trip).
    await page.getByRole("button", { name: "Link Test IdP" }).click();
    await page.getByText("The identity was linked.").waitFor();
    expect(await page.getByText("idp-grace").count()).toBe(1);
    await shot("07-identity-linked");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    expect(await page.getByLabel("E-mail address").count()).toBe(1);
    await shot("08-signed-out");
    expect((await page.context().cookies()).some((c) => c.name === "almanac.session_token")).toBe(false);

    // Back in directly with the linked identity: one button, the IdP round trip, the account.
    await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
    await page.getByRole("heading", { name: "Your account" }).waitFor();
    expect(await page.getByText("grace@example.test").count()).toBe(1);
    await shot("09-signed-in-with-idp");
  });

  it("a new person signs up with the identity provider directly: a new account, its identity linked", async () => {
    idp.setUser({ sub: "idp-newcomer", email: "newcomer@idp.example", name: "Newcomer", emailVerified: true });
    const fresh = await (await site.browser.newContext()).newPage();
    await fresh.goto(`${base}/account`);
    await fresh.getByRole("button", { name: "Sign in with Test IdP" }).click();
    await fresh.getByRole("heading", { name: "Your account" }).waitFor();
    expect(await fresh.getByText("newcomer@idp.example").count()).toBeGreaterThan(0);
    expect(await fresh.getByText("idp-newcomer").count()).toBe(1);
    await fresh.screenshot({ path: `${SHOTS}/10-signed-up-with-idp.png`, fullPage: true });
    await fresh.context().close();
  });
});
