import { existsSync } from "node:fs";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousViolations } from "../support/axe.js";
import { type BrowserSite, CHROMIUM, NO_CHROMIUM, SHOTS, startBrowserSite } from "../support/browser.js";
import type { SmtpTestServer } from "../support/smtp-server.js";

describe.skipIf(!existsSync(CHROMIUM))(
  `Almanac's own pages: accessible, phone-sized, light and dark${NO_CHROMIUM}`,
  () => {
    let site: BrowserSite;
    let smtp: SmtpTestServer;
    let browser: Browser;
    let base: string;

    beforeAll(async () => {
      site = await startBrowserSite(() => ({ DEMO_HOURLY_LIMIT: "1000" }));
      ({ base, smtp, browser } = site);
    });

    afterAll(() => site?.close());

    /** Visits every page state in one colour scheme at 390 px, checking each with axe and for overflow. */
    async function walk(scheme: "light" | "dark") {
      // bypassCSP lets the test inject axe-core; the pages' own CSP is tested elsewhere.
      const context: BrowserContext = await browser.newContext({
        viewport: { width: 390, height: 844 },
        colorScheme: scheme,
        bypassCSP: true,
      });
      const page = await context.newPage();
      const findings: Record<string, string[]> = {};
      const overflow: Record<string, number> = {};
      const check = async (name: string, exclude: string[] = []) => {
        findings[name] = await seriousViolations(page, exclude);
        overflow[name] = await page.evaluate(() => document.documentElement.scrollWidth);
        await page.screenshot({ path: `${SHOTS}/human-${scheme}-${name}.png`, fullPage: true });
      };
      const email = `axe-${scheme}@example.test`;

      await page.goto(`${base}/`);
      await check("home");
      await page.getByRole("link", { name: "API reference (try it in the browser)" }).click();
      await page.locator(".swagger-ui").first().waitFor();
      // Swagger UI's own markup is not ours: only Almanac's navigation bar is checked there.
      await check("docs", ["#reference"]);
      await page.getByRole("link", { name: "Get an API key" }).click();
      await page.getByLabel("E-mail address").waitFor();
      await check("sign-in");
      const before = smtp.messages.length;
      await page.getByLabel("E-mail address").fill(email);
      await page.getByRole("button", { name: "Send me a code" }).click();
      await page.getByLabel("Code").waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("code");
      await check("code-sent");
      await page.getByLabel("Code").fill("000000");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("2 tries left").first().waitFor();
      await check("wrong-code");
      const mail = await smtp.waitForMessage((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= before);
      await page.getByLabel("Code").fill(/\b(\d{6})\b/.exec(mail.text)?.[1] ?? "");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Your account" }).waitFor();
      await check("signed-in");
      await page.getByLabel("New key name").fill(`k-${scheme}`);
      await page.getByRole("button", { name: "Create key" }).click();
      await page.locator("#new-key").waitFor();
      await check("key-created");
      // A lookups-only key: one lookup allowed, one classify call refused (403), both in its chart.
      await page.getByLabel("New key name").fill(`lookups-${scheme}`);
      await page.getByRole("checkbox", { name: /Classify texts/ }).uncheck();
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.locator("#new-key").textContent()) ?? "";
      const auth = { Authorization: `Bearer ${key}` };
      expect((await fetch(`${base}/v1/moon`, { headers: auth })).status).toBe(200);
      const refused = await fetch(`${base}/v1/vibe/classify`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ texts: ["a fine day"] }),
      });
      expect(refused.status).toBe(403);
      await page.goto(`${base}/account`);
      await page.getByText("refused", { exact: true }).first().waitFor();
      await check("chart-refused");
      await page.goto(`${base}/account/nope`);
      await check("error-page");
      await context.close();
      return { findings, overflow };
    }

    it.each(["light", "dark"] as const)(
      "%s: every page state has 0 serious/critical axe violations (contrast ≥ 4.5:1) and no sideways scroll at 390 px",
      async (scheme) => {
        const { findings, overflow } = await walk(scheme);
        expect(Object.keys(findings)).toHaveLength(9);
        expect(findings).toEqual(Object.fromEntries(Object.keys(findings).map((k) => [k, []])));
        expect(overflow).toEqual(Object.fromEntries(Object.keys(overflow).map((k) => [k, 390])));
      },
      180_000,
    );
  },
);
