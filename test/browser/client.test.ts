import { existsSync } from "node:fs";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserSite, CHROMIUM, launchChromium, NO_CHROMIUM, startBrowserSite } from "../support/browser.js";

/**
 * @almanac/client bundled for the browser (esbuild, as an app would) and run in Chromium on a
 * plain-HTTP page that is not localhost (`almanac.test`, mapped to 127.0.0.1): not a secure
 * context, so `crypto.randomUUID` is missing and the client must make its Idempotency-Key from
 * `crypto.getRandomValues`.
 */
describe.skipIf(!existsSync(CHROMIUM))(`the TypeScript client in a browser${NO_CHROMIUM}`, () => {
  let site: BrowserSite;
  let browser: Browser;
  let bundle: string;
  let key: string;
  beforeAll(async () => {
    site = await startBrowserSite();
    browser = await launchChromium(["--host-resolver-rules=MAP almanac.test 127.0.0.1"]);
    key = (await site.t.deps.keys.create({ name: "browser-client", permissions: ["vibe.classify"] })).key;
    const out = await build({
      entryPoints: [new URL("../../clients/typescript/src/index.ts", import.meta.url).pathname],
      bundle: true,
      format: "iife",
      globalName: "AlmanacClient",
      platform: "browser",
      write: false,
    });
    bundle = out.outputFiles[0]?.text ?? "";
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("classifies from a plain-HTTP page, with an Idempotency-Key from getRandomValues", async () => {
    const origin = site.base.replace("localhost", "almanac.test");
    const page = await (await browser.newContext()).newPage();
    const sent: Record<string, string>[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/v1/vibe/classify") && r.method() === "POST") sent.push(r.headers());
    });
    await page.goto(`${origin}/healthz`);
    await page.addScriptTag({ content: bundle });
    const result = await page.evaluate(
      async ({ origin, key }) => {
        const w = window as unknown as {
          AlmanacClient: typeof import("../../clients/typescript/src/index.js");
        };
        const client = w.AlmanacClient.createAlmanacClient({ baseUrl: origin, apiKey: key });
        const answer = await client.post("/v1/vibe/classify", { body: ["What a lovely day!"] });
        return {
          secure: window.isSecureContext,
          randomUUID: typeof (crypto as { randomUUID?: unknown }).randomUUID,
          label: answer.data.results[0]?.label,
          requestId: answer.requestId,
        };
      },
      { origin, key },
    );
    expect(result).toMatchObject({ secure: false, randomUUID: "undefined", label: "positive" });
    expect(result.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[0]?.["idempotency-key"]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    // The browser names itself; the client does not try to.
    expect(sent[0]?.["user-agent"]).toMatch(/Chrome/);
  });
});
