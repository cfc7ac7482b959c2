import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { startServer } from "../../src/server.js";
import { closeNow, type TestApp, testApp } from "../helpers/app.js";
import { type SmtpTestServer, startSmtpServer } from "./smtp-server.js";

/** Debian's Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What a browser suite's title ends with when it is skipped: why. */
export const NO_CHROMIUM = existsSync(CHROMIUM) ? "" : ` (skipped: no Chromium at ${CHROMIUM}; set CHROMIUM_PATH)`;
export const SHOTS = "test-results/screenshots";

/** A free TCP port on 127.0.0.1 (the app's PUBLIC_URL must be known before it listens). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * Headless Chromium as this machine needs it: no sandbox (root), no GPU, and no background
 * networking, component updates or sync (the closed network refuses them, many at a time).
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
      ...extraArgs,
    ],
  });
}

export interface BrowserSite {
  /** `http://localhost:PORT`, also the app's PUBLIC_URL. */
  base: string;
  smtp: SmtpTestServer;
  t: TestApp;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The app on a real socket with a real SMTP server as its mail lane, and headless Chromium to
 * drive it. `env` adds configuration; it gets the base URL first (an OIDC provider needs it).
 */
export async function startBrowserSite(
  env: (base: string) => Record<string, string> | Promise<Record<string, string>> = () => ({}),
): Promise<BrowserSite> {
  mkdirSync(SHOTS, { recursive: true });
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const smtp = await startSmtpServer();
  const t = await testApp({ PORT: String(port), PUBLIC_URL: base, MAIL_URL: smtp.url, ...(await env(base)) });
  const server = await startServer(t.app, t.deps, { port, host: "127.0.0.1" });
  const browser = await launchChromium();
  return {
    base,
    smtp,
    t,
    browser,
    close: async () => {
      await browser.close();
      await closeNow(server);
      await t.close();
      await smtp.close();
    },
  };
}
