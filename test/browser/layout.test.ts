import { existsSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountPage, signIn } from "../account/support.js";
import { type BrowserSite, CHROMIUM, NO_CHROMIUM, SHOTS, startBrowserSite } from "../support/browser.js";

/** What a person cannot reach or hit on the page as laid out now. */
function layoutFaults(page: Page) {
  return page.evaluate(() => {
    const faults: string[] = [];
    const width = document.documentElement.clientWidth;
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()} "${(el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 30)}"`;
    if (document.documentElement.scrollWidth > width)
      faults.push(`page ${document.documentElement.scrollWidth} px wide`);
    for (const el of document.querySelectorAll("main *")) {
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible" && el.tagName !== "PRE")
        faults.push(`${name(el)} scrolls sideways (${el.scrollWidth} in ${el.clientWidth} px)`);
    }
    const targets = "main button, main a.button, main select, main input:not([type=hidden]), main form a";
    for (const el of document.querySelectorAll(targets)) {
      const target = el.matches("input[type=checkbox], input[type=radio]") ? (el.closest("label") ?? el) : el;
      const r = target.getBoundingClientRect();
      if (r.right > width + 0.5 || r.left < -0.5)
        faults.push(`${name(el)} reaches ${Math.round(r.right)} of ${width} px`);
      if (r.height < 44 || r.width < 44)
        faults.push(`${name(el)} is ${Math.round(r.width)}×${Math.round(r.height)} px`);
    }
    // Neighbouring controls of one form at least 8 px apart.
    for (const form of document.querySelectorAll("main form")) {
      const els = [...form.querySelectorAll("button, a")].map((e) => [e, e.getBoundingClientRect()] as const);
      for (let i = 1; i < els.length; i++) {
        const [a, ra] = els[i - 1] as [Element, DOMRect];
        const [b, rb] = els[i] as [Element, DOMRect];
        const apart = Math.max(rb.left - ra.right, ra.left - rb.right, rb.top - ra.bottom, ra.top - rb.bottom);
        if (apart < 8) faults.push(`${name(a)} and ${name(b)} are ${Math.round(apart)} px apart`);
      }
    }
    return faults;
  });
}

describe.skipIf(!existsSync(CHROMIUM))(`account pages fit laptops and phones${NO_CHROMIUM}`, () => {
  let site: BrowserSite;
  let context: BrowserContext;
  let page: Page;
  let rolledId = "";

  beforeAll(async () => {
    site = await startBrowserSite();
    // A signed-in account with what makes rows long: a roll in its grace period and a revoked key (behind "show all").
    const agent = await signIn(site.t.app, site.base, site.smtp, "layout@example.test");
    const create = async (name: string, expires = "never") =>
      agent.post("/account/keys", { csrf: (await accountPage(agent)).csrf, name, expires });
    await create("production server in Frankfurt", "90d");
    await create("staging");
    const ids = [...(await accountPage(agent)).html.matchAll(/\/account\/keys\/([^/"]+)\/revoke/g)].map((m) => m[1]);
    rolledId = ids[0] ?? "";
    const { csrf } = await accountPage(agent);
    await agent.post(`/account/keys/${ids[1]}/revoke`, { csrf });
    await agent.post(`/account/keys/${rolledId}/roll`, { csrf, grace: "86400" });
    await create("laptop"); // one that can still be rolled
    context = await site.browser.newContext();
    const token = agent.cookie("almanac.session_token");
    await context.addCookies([{ name: "almanac.session_token", value: token ?? "", url: site.base }]);
    page = await context.newPage();
  });

  afterAll(() => site?.close());

  it.each([390, 1280, 1440, 1920])("at %i px nothing is cut off, targets are ≥ 44 px and 8 px apart", async (width) => {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${site.base}/account?all=1`);
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.screenshot({ path: `${SHOTS}/layout-${width}-keys.png`, fullPage: true });
    const faults = { keys: await layoutFaults(page) };
    const active = await page.locator("a[href$='/roll']").first().getAttribute("href");
    await page.goto(`${site.base}${active}`);
    await page.screenshot({ path: `${SHOTS}/layout-${width}-roll.png`, fullPage: true });
    const roll = await layoutFaults(page);
    await page.goto(`${site.base}/account/keys/${rolledId}/edit`);
    const edit = await layoutFaults(page);
    await page.goto(`${site.base}/account/keys/${rolledId}/revoke`);
    const revoke = await layoutFaults(page);
    expect({ ...faults, roll, edit, revoke }).toEqual({ keys: [], roll: [], edit: [], revoke: [] });
  });
});
