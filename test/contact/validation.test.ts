import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { ADA, type ContactHarness, contactHarness } from "./setup.js";

const BREAKS = { CR: "\r", LF: "\n", CRLF: "\r\n", NEL: "\u0085", LS: "\u2028", PS: "\u2029" };
const LINE_BREAK = "must not contain a line break (CR, LF, U+0085, U+2028 or U+2029)";

describe("POST /v1/mail/contact refuses what it must not send", () => {
  let h: ContactHarness;
  beforeAll(async () => {
    h = await contactHarness();
  });
  afterAll(async () => {
    // Nothing refused reaches the mail server or the database.
    expect(h.smtp.messages).toEqual([]);
    expect(await h.rows()).toEqual([]);
    await h.close();
  });

  const cases: [string, unknown, string][] = [
    ["missing name", { email: ADA.email, message: "hi" }, 'Field "name" is required.'],
    ["empty name", { ...ADA, name: "" }, 'Field "name" must not be blank.'],
    ["blank name", { ...ADA, name: "   " }, 'Field "name" must not be blank.'],
    ["name of 101 characters", { ...ADA, name: "a".repeat(101) }, 'Field "name" must be at most 100 characters.'],
    ["name not a string", { ...ADA, name: 42 }, 'Field "name" must be a string.'],
    ["name with a tab", { ...ADA, name: "Ada\tL" }, 'Field "name" must not contain control characters.'],
    ["missing email", { name: "Ada", message: "hi" }, 'Field "email" is required.'],
    ["invalid email", { ...ADA, email: "not-an-address" }, 'Field "email" must be a valid e-mail address.'],
    [
      "two addresses",
      { ...ADA, email: "a@example.com, b@example.com" },
      'Field "email" must be a valid e-mail address.',
    ],
    [
      "email of 255 characters",
      { ...ADA, email: `${"a".repeat(243)}@example.com` },
      'Field "email" must be at most 254 characters.',
    ],
    [
      "subject of 201 characters",
      { ...ADA, subject: "s".repeat(201) },
      'Field "subject" must be at most 200 characters.',
    ],
    ["missing message", { name: "Ada", email: ADA.email }, 'Field "message" is required.'],
    ["empty message", { ...ADA, message: "" }, 'Field "message" must be at least 1 character.'],
    [
      "message of 10,001 characters",
      { ...ADA, message: "m".repeat(10_001) },
      'Field "message" must be at most 10000 characters.',
    ],
    [
      "unknown field",
      { ...ADA, cc: "eve@example.com" },
      'Request body has unknown field "cc"; allowed: name, email, subject, message.',
    ],
    [
      "an array",
      [ADA],
      "Request body must be a JSON object {name, email, subject?, message}: Invalid input: expected object, received array.",
    ],
  ];
  // Stored and mailed, an unpaired surrogate becomes U+FFFD: the row no longer matched the request,
  // so an identical Idempotency-Key retry was refused 409 as another body.
  for (const field of ["name", "subject", "message"] as const) {
    cases.push([
      `unpaired surrogate in ${field}`,
      { ...ADA, [field]: "Ada \ud800 L" },
      `Field "${field}" must not contain an unpaired surrogate (U+D800 to U+DFFF).`,
    ]);
  }
  for (const field of ["name", "email", "subject"] as const) {
    for (const [label, br] of Object.entries(BREAKS)) {
      const value = field === "email" ? `ada@example.com${br}Bcc: eve@example.com` : `Hi${br}Bcc: eve@example.com`;
      cases.push([`${label} in ${field}`, { ...ADA, [field]: value }, `Field "${field}" ${LINE_BREAK}.`]);
    }
  }

  for (const [label, body, message] of cases) {
    it(`${label} → 400 invalid_body naming the field`, async () => {
      const res = await h.post(body);
      expect(res.status).toBe(400);
      const { error } = await errorOf(res);
      expect(error.code).toBe("invalid_body");
      expect(error.message).toBe(message);
      expect(error.details).toHaveProperty("fieldErrors");
    });
  }

  it("thousands of unknown fields → 400 naming five of them, not an answer twice the size of the request", async () => {
    const body: Record<string, unknown> = { ...ADA };
    for (let i = 0; i < 10_000; i++) body[`k${i}`] = 1;
    const res = await h.post(body);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    const { error } = JSON.parse(text) as { error: { code: string; message: string; details: unknown } };
    const five = '"k0", "k1", "k2", "k3", "k4" and 9995 more';
    expect(error).toMatchObject({
      code: "invalid_body",
      message: `Request body has unknown fields ${five}; allowed: name, email, subject, message.`,
      details: { formErrors: [`Unrecognized keys: ${five}`], fieldErrors: {} },
    });
  });

  for (const [label, raw] of [
    ["malformed JSON", '{"name": "Ada",'],
    ["empty body", ""],
  ]) {
    it(`${label} → 400 invalid_body saying the body must be JSON`, async () => {
      const res = await h.post(raw);
      expect(res.status).toBe(400);
      const { error } = await errorOf(res);
      expect(error.code).toBe("invalid_body");
      expect(error.message).toMatch(/^Request body must be (valid )?JSON\.$/);
    });
  }

  it("a non-JSON content type → 400 invalid_body", async () => {
    const res = await h.t.app.request("/v1/mail/contact", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(ADA),
    });
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toBe("Request body must be JSON (send Content-Type: application/json).");
  });
});
