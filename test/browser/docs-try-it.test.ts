import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserSite, CHROMIUM, NO_CHROMIUM, startBrowserSite } from "../support/browser.js";

/** The values "Try it out" starts with for an operation's parameters, by name. */
async function tryItValues(page: Page, method: string, path: string): Promise<Record<string, string>> {
  const op = page.locator(`.opblock-${method}`, { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
  await op.locator(".opblock-summary").first().click();
  await op.getByRole("button", { name: "Try it out" }).click();
  await op.locator("tr[data-param-name] input").first().waitFor();
  const rows = await op.locator("tr[data-param-name]").all();
  const out: Record<string, string> = {};
  for (const row of rows) {
    const input = row.locator("input").first();
    if (await input.count()) out[(await row.getAttribute("data-param-name")) ?? ""] = await input.inputValue();
  }
  return out;
}

describe.skipIf(!existsSync(CHROMIUM))(`/docs try-it starts from what a person means${NO_CHROMIUM}`, () => {
  let site: BrowserSite;
  beforeAll(async () => {
    site = await startBrowserSite();
  });
  afterAll(() => site?.close());

  it("optional parameters start empty (VAT date, Idempotency-Key); required ones keep their example", async () => {
    const page = await (await site.browser.newContext()).newPage();
    await page.goto(`${site.base}/docs`);
    await page.locator(".opblock").first().waitFor();
    expect(await tryItValues(page, "get", "/v1/vat")).toMatchObject({ code: "DE", date: "" });
    expect(await tryItValues(page, "post", "/v1/vibe/classify")).toMatchObject({ "idempotency-key": "" });
  });
});
