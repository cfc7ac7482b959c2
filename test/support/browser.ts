import { createServer } from "node:net";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
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
export function launchChromium(): Promise<Browser> {
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
    ],
  });
}
