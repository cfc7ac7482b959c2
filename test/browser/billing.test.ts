import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { FakeStripeServer } from "../fakes/stripe-server.js";
import { closeNow, type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, REDIS_URL, tempDir } from "../helpers/env.js";
import { CHROMIUM, freePort, launchChromium, NO_CHROMIUM, SHOTS } from "../support/browser.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

const variants = [
  { name: "SQLite, one instance", shared: false, skip: "" },
  {
    name: "PostgreSQL + Redis, two instances (the webhook lands on the other one)",
    shared: true,
    skip: DATABASE_URL && REDIS_URL ? "" : " (skipped: needs DATABASE_URL and REDIS_URL)",
  },
];

describe.skipIf(!existsSync(CHROMIUM))(`buying and cancelling a plan in Chromium${NO_CHROMIUM}`, () => {
  describe.each(variants)("$name$skip", ({ shared, skip }) => {
    if (skip) return void it.skip("needs PostgreSQL and Redis", () => {});
    const apps: TestApp[] = [];
    const servers: RunningServer[] = [];
    let stripe: FakeStripeServer;
    let smtp: SmtpTestServer;
    let drop: (() => Promise<void>) | undefined;
    let page: Page;
    let close: () => Promise<void>;
    let base = "";

    beforeAll(async () => {
      smtp = await startSmtpServer();
      const ports = [await freePort(), await freePort()];
      base = `http://localhost:${ports[0]}`;
      const pg = shared ? await freshPostgresUrl() : undefined;
      drop = pg?.drop;
      const count = shared ? 2 : 1;
      // Stripe delivers its events to the last instance; the browser uses the first.
      stripe = new FakeStripeServer((path, init) => fetch(`http://127.0.0.1:${ports[count - 1]}${path}`, init));
      await stripe.start();
      const env = {
        PUBLIC_URL: base,
        MAIL_URL: smtp.url,
        AUTH_SECRET: "a-shared-secret-of-at-least-32-characters!",
        STRIPE_WEBHOOK_SECRET: stripe.signer.secret,
        STRIPE_SECRET_KEY: stripe.secretKey,
        STRIPE_PRICE_PRO: stripe.prices.pro,
        STRIPE_PRICE_SCALE: stripe.prices.scale,
        STRIPE_API_BASE: stripe.base,
        ...(pg && { DATABASE_URL: pg.url, REDIS_URL: REDIS_URL as string }),
      };
      for (let i = 0; i < count; i++) {
        const port = ports[i] as number;
        const t = await testApp({ ...env, PORT: String(port), DATA_DIR: tempDir() });
        apps.push(t);
        servers.push(await startServer(t.app, t.deps, { port, host: "127.0.0.1" }));
      }
      const browser = await launchChromium();
      page = await (await browser.newContext()).newPage();
      close = () => browser.close();
    });

    afterAll(async () => {
      await close?.();
      for (const s of servers) await closeNow(s);
      for (const t of apps) await t.close();
      await stripe?.close();
      await smtp?.close();
      await drop?.();
    });

    const shot = (name: string) =>
      page.screenshot({ path: `${SHOTS}/billing-${shared ? "pg" : "sqlite"}-${name}.png`, fullPage: true });
    const planShown = () => page.getByTestId("plan-name").textContent();

    it("Buy pro signed out, sign in: straight to Checkout; pay, back: being confirmed, then pro with its quota; cancel in the portal: free at the period's end", async () => {
      await page.goto(`${base}/`);
      await page.getByRole("button", { name: "Buy pro" }).click();
      await page.getByLabel("E-mail address").fill("ada@example.test");
      await page.getByRole("button", { name: "Send me a code" }).click();
      const mail = await smtp.waitForMessage((m) => m.to.includes("ada@example.test"));
      await page.getByLabel("Code").fill(/\b(\d{6})\b/.exec(mail.text)?.[1] ?? "");
      // Stripe holds its events until the page has said it is waiting for them.
      const release = stripe.hold();
      // The plan chosen before signing in rides through it: the person lands in Checkout.
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: /Pay/ }).waitFor();
      expect(page.url()).toMatch(new RegExp(`^${stripe.base}/checkout/cs_test_`));
      await page.getByRole("button", { name: "Pay" }).click();
      await page.getByText("Stripe is confirming your purchase").waitFor();
      expect(page.url()).toMatch(/\/account\?checkout=done&session=cs_test_/);
      await shot("1-confirming");
      release();
      // The page reloads itself until the webhook has landed (no reload by the test).
      await page.getByText("Your purchase is confirmed: you are on pro").waitFor({ timeout: 20_000 });
      expect(await planShown()).toBe("pro");
      expect(await page.locator("p.plan").textContent()).toContain("100,000 uses left");
      expect(await page.locator(".billing").textContent()).toMatch(/renews on \d{4}-\d{2}-\d{2}/);
      expect(await page.locator(".billing").textContent()).toMatch(/Last payment: €19\.00/);
      await shot("2-pro");

      await page.getByRole("button", { name: "Manage billing" }).click();
      await page.getByRole("heading", { name: "Your subscription" }).waitFor();
      await page.getByRole("button", { name: "Cancel plan" }).click();
      await page.getByRole("heading", { name: "Your account" }).waitFor();
      expect(await planShown()).toBe("pro");
      expect(await page.locator(".billing").textContent()).toMatch(/cancelled: ends on \d{4}-\d{2}-\d{2}, then free/);
      await shot("3-cancelled");

      // The period ends: Stripe ends the subscription.
      const sub = [...stripe.subscriptions.values()].find((s) => s.cancel_at_period_end);
      expect((await stripe.endPeriod(sub?.id ?? "")).status).toBe(200);
      await page.reload();
      expect(await planShown()).toBe("free");
      expect(await page.locator("p.plan").textContent()).toContain("100 uses left");
      await shot("4-free");
    });
  });
});
