import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADA, type ContactHarness, contactHarness } from "../contact/setup.js";
import { testApp } from "../helpers/app.js";

/**
 * Issue 21.3 names the contact desk's 502 among the answers that sent RateLimit undeclared. The
 * fuzzers never meet it (their mail lane always accepts), nor the 503 of a server without one.
 */
const PROTOCOL = new Set(["content-type", "content-length", "connection", "date", "vary", "transfer-encoding"]);

describe("POST /v1/mail/contact → 502 (the mail server refuses)", () => {
  let h: ContactHarness;
  beforeAll(async () => {
    h = await contactHarness();
    h.smtp.setMode("reject");
  });
  afterAll(() => h.close());

  it("every header it carries is declared for that 502", async () => {
    const res = await h.post(ADA);
    expect(res.status).toBe(502);
    expect(await undeclared(h.t.app, res)).toEqual([]);
  });
});

describe("POST /v1/mail/contact → 503 (no mail lane: MAIL_URL unset)", () => {
  it("every header it carries is declared for that 503", async () => {
    const t = await testApp({ MAIL_URL: undefined });
    try {
      const res = await t.app.request("/v1/mail/contact", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(ADA),
      });
      expect(res.status).toBe(503);
      expect(await undeclared(t.app, res)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

/** The headers `res` (an answer of POST /v1/mail/contact) carries that the document does not declare for its status. */
async function undeclared(app: ContactHarness["t"]["app"], res: Response): Promise<string[]> {
  const doc = (await (await app.request("/v1/openapi.json")).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
  };
  const responses = doc.paths["/v1/mail/contact"]?.post?.responses ?? {};
  const declared = Object.keys(responses[String(res.status)]?.headers ?? {}).map((h) => h.toLowerCase());
  return [...res.headers.keys()].filter((name) => !PROTOCOL.has(name) && !declared.includes(name));
}
