import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADA, type ContactHarness, contactHarness } from "../contact/setup.js";
import { testApp } from "../helpers/app.js";

/**
 * Answers the fuzzers never meet (their mail lane accepts, their upstreams answer, their demo limit
 * is a million), held to the document like theirs: every header is declared for its status.
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

describe.each([
  ["/v1/postcode", "/v1/postcode?postcode=SW1A2AA"],
  ["/v1/weather", "/v1/weather?postcode=SW1A2AA"],
])("GET %s → 502 (the upstream is down)", (path, url) => {
  it("every header it carries is declared for that 502", async () => {
    // Nothing listens on port 1.
    const t = await testApp({ POSTCODES_BASE_URL: "http://127.0.0.1:1", OPEN_METEO_BASE_URL: "http://127.0.0.1:1" });
    try {
      const res = await t.app.request(url);
      expect(res.status).toBe(502);
      expect(await undeclared(t.app, res, path, "get")).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("GET → 429 (the demo tier's hourly limit)", () => {
  it.each([
    ["/v1/moon", "/v1/moon?date=2024-01-25"],
    ["/v1/vat", "/v1/vat?code=DE"],
  ])("%s: every header it carries is declared for that 429", async (path, url) => {
    const t = await testApp({ DEMO_HOURLY_LIMIT: "1" });
    try {
      await (await t.app.request(url)).arrayBuffer();
      const res = await t.app.request(url);
      expect(res.status).toBe(429);
      expect(await undeclared(t.app, res, path, "get")).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

/** The headers `res` carries that the document does not declare for its status of `method path`. */
async function undeclared(
  app: ContactHarness["t"]["app"],
  res: Response,
  path = "/v1/mail/contact",
  method = "post",
): Promise<string[]> {
  const doc = (await (await app.request("/v1/openapi.json")).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
  };
  const responses = doc.paths[path]?.[method]?.responses ?? {};
  const declared = Object.keys(responses[String(res.status)]?.headers ?? {}).map((h) => h.toLowerCase());
  return [...res.headers.keys()].filter((name) => !PROTOCOL.has(name) && !declared.includes(name));
}
