import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousViolations } from "../support/axe.js";
import { type BrowserSite, CHROMIUM, NO_CHROMIUM, SHOTS, startBrowserSite } from "../support/browser.js";

/**
 * /docs as a whole, the reference renderer included: with POST /v1/vibe/classify open
 * and "Try it out" on (the state with the most controls) and GET /v1/moon tried (a live answer with
 * its headers), in light and dark, on a phone and a laptop.
 */
describe.skipIf(!existsSync(CHROMIUM))(
  `/docs: 0 serious/critical axe findings, nothing wider than the screen${NO_CHROMIUM}`,
  () => {
    let site: BrowserSite;
    beforeAll(async () => {
      site = await startBrowserSite();
    });
    afterAll(() => site?.close());

    it.each([
      ["light", 390],
      ["dark", 390],
      ["light", 1280],
      ["dark", 1280],
    ] as const)(
      "%s at %i px with an open operation",
      async (scheme, width) => {
        const context = await site.browser.newContext({
          viewport: { width, height: 900 },
          colorScheme: scheme,
          bypassCSP: true, // to inject axe-core; the page's own CSP is tested with the page (test/home/human-path.test.ts)
        });
        const page = await context.newPage();
        await page.goto(`${site.base}/docs`);
        const op = page.locator(".opblock-post", {
          has: page.locator('.opblock-summary-path[data-path="/v1/vibe/classify"]'),
        });
        await op.locator(".opblock-summary").first().click();
        await op.getByRole("button", { name: "Try it out" }).click();
        await op.locator("tr[data-param-name] input").first().waitFor();
        const moon = page.locator(".opblock-get", { has: page.locator('.opblock-summary-path[data-path="/v1/moon"]') });
        await moon.locator(".opblock-summary").first().click();
        await moon.getByRole("button", { name: "Try it out" }).click();
        await moon.getByRole("button", { name: "Execute" }).click();
        await moon.locator(".live-responses-table .response .response-col_status").first().waitFor();
        expect(await moon.locator(".live-responses-table .response .response-col_status").first().textContent()).toBe(
          "200",
        );
        const findings = await seriousViolations(page);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        await page.screenshot({ path: `${SHOTS}/docs-${scheme}-${width}.png`, fullPage: true });
        await context.close();
        expect({ findings, wide }).toEqual({ findings: [], wide: width });
      },
      180_000,
    );
  },
);
