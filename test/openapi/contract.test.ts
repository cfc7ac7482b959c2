import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FuzzRig, fuzzRig } from "../resilience/fuzz.js";

/**
 * The document as a contract: real answers of every operation — successes and errors — are
 * validated (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses) against the schema the document gives
 * for that status, every status met must be documented, and every documented operation must be
 * exercised here (a new route fails this test until it is added below).
 */

type Operations = Record<string, Record<string, { operationId?: string; responses: Record<string, ResponseDoc> }>>;
/** Webhooks are keyed by the path they are sent to. */
type Doc = { paths: Operations; webhooks: Operations };
type ResponseDoc = { headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> };

let rig: FuzzRig;
let doc: Doc;
let all: Operations;
let ajv: Ajv2020;
beforeAll(async () => {
  rig = await fuzzRig();
  doc = (await (await rig.t.app.request("/v1/openapi.json")).json()) as Doc;
  // Webhooks are keyed by the path they are sent to: one table of operations, one pointer scheme.
  all = { ...doc.paths, ...doc.webhooks };
  ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc as object, "openapi");
});
afterAll(() => rig.close());

const json = { "Content-Type": "application/json" };
const bearer = () => ({ Authorization: `Bearer ${rig.key}` });
const contact = { name: "Ada", email: "ada@example.com", message: "Hello there, a question about VAT." };

/** Headers of HTTP itself, not of this API: every other header an answer carries must be declared. */
const PROTOCOL_HEADERS = new Set(["content-type", "content-length", "connection", "date", "vary", "transfer-encoding"]);

/** The headers `res` carries that `response` does not declare. */
function undeclared(label: string, res: Response, response: ResponseDoc): string[] {
  const declared = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()));
  return [...res.headers.keys()]
    .filter((name) => !PROTOCOL_HEADERS.has(name) && !declared.has(name))
    .map((name) => `${label}: header ${name} not declared`);
}

/** [method, documented path, url, init, expected status]. */
const CASES: () => [string, string, string, RequestInit, number][] = () => [
  ["get", "/v1/moon", "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1", {}, 200],
  ["get", "/v1/moon", "/v1/moon?lat=999", {}, 400],
  ["get", "/v1/moon", "/v1/moon", { headers: { Authorization: "Bearer alm_nope" } }, 401],
  ["get", "/v1/sun", "/v1/sun?lat=51.5&lon=-0.1&date=2024-06-21", {}, 200],
  ["get", "/v1/sun", "/v1/sun?lat=51.5", {}, 400],
  ["get", "/v1/holidays", "/v1/holidays?country=GB&region=SCT&year=2026", {}, 200],
  ["get", "/v1/holidays", "/v1/holidays?country=XX", {}, 404],
  ["get", "/v1/holidays/working-days", "/v1/holidays/working-days?country=DE&date=2026-12-24&add=3", {}, 200],
  ["get", "/v1/holidays/working-days", "/v1/holidays/working-days?country=DE&date=24.12.2026", {}, 400],
  ["get", "/v1/vat", "/v1/vat?code=DE&date=2026-01-01", {}, 200],
  ["get", "/v1/vat", "/v1/vat?code=DE136695976", {}, 200],
  ["get", "/v1/vat", "/v1/vat", {}, 400],
  ["get", "/v1/postcode", "/v1/postcode?postcode=SW1A2AA", {}, 200],
  ["get", "/v1/postcode", "/v1/postcode?postcode=Q11AA", {}, 404],
  ["get", "/v1/weather", "/v1/weather?postcode=SW1A2AA", {}, 200],
  ["get", "/v1/weather", "/v1/weather", {}, 400],
  [
    "post",
    "/v1/vibe/classify",
    "/v1/vibe/classify",
    { method: "POST", headers: { ...json, ...bearer() }, body: '["a good day"]' },
    200,
  ],
  ["post", "/v1/vibe/classify", "/v1/vibe/classify", { method: "POST", headers: json, body: '["x"]' }, 401],
  [
    "post",
    "/v1/vibe/classify",
    "/v1/vibe/classify",
    { method: "POST", headers: { ...json, ...bearer() }, body: "[]" },
    400,
  ],
  [
    "post",
    "/v1/vibe/classify",
    "/v1/vibe/classify",
    { method: "POST", headers: { ...json, ...bearer() }, body: JSON.stringify(["x".repeat(400_000)]) },
    413,
  ],
  [
    "post",
    "/v1/mail/contact",
    "/v1/mail/contact",
    { method: "POST", headers: json, body: JSON.stringify(contact) },
    200,
  ],
  ["post", "/v1/mail/contact", "/v1/mail/contact", { method: "POST", headers: json, body: "{}" }, 400],
  ["get", "/v1/usage", "/v1/usage", { headers: bearer() }, 200],
  ["get", "/v1/usage", "/v1/usage", {}, 401],
  ["post", "/v1/billing/webhook", "/v1/billing/webhook", { method: "POST", headers: json, body: "{}" }, 400],
];

describe("/v1/openapi.json is a contract real answers keep", () => {
  it("every operation has an operationId, unique", () => {
    const ids = Object.values(all).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("every answer's status is documented, with X-Request-Id, and its body matches the schema", async () => {
    const problems: string[] = [];
    for (const [method, path, url, init, expected] of CASES()) {
      const res = await rig.t.app.request(url, init);
      const label = `${method.toUpperCase()} ${url.slice(0, 60)} → ${res.status}`;
      expect(res.status, label).toBe(expected);
      const response = all[path]?.[method]?.responses[String(res.status)];
      if (!response) {
        problems.push(`${label}: status not documented`);
        continue;
      }
      if (!response.headers?.["X-Request-Id"]) problems.push(`${label}: X-Request-Id not declared`);
      problems.push(...undeclared(label, res, response));
      if (!response.content?.["application/json"]?.schema) continue;
      const section = doc.paths[path] ? "paths" : "webhooks";
      const pointer = `openapi#/${section}/${path.replaceAll("/", "~1")}/${method}/responses/${res.status}/content/application~1json/schema`;
      const validate = ajv.compile({ $ref: pointer });
      if (!validate(await res.json())) problems.push(`${label}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(problems).toEqual([]);
  });

  it("a 304 and a 405 are documented where they happen", async () => {
    const path = "/v1/moon?date=2024-01-25";
    const tag = (await rig.t.app.request(path)).headers.get("etag") ?? "";
    const notModified = await rig.t.app.request(path, { headers: { "If-None-Match": tag } });
    expect(notModified.status).toBe(304);
    const responses = doc.paths["/v1/moon"]?.get?.responses ?? {};
    expect(responses["304"]).toBeDefined();
    expect(undeclared("304", notModified, responses["304"] ?? {})).toEqual([]);
    const wrong = await rig.t.app.request("/v1/moon", { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(responses["405"]).toBeDefined();
    expect(undeclared("405", wrong, responses["405"] ?? {})).toEqual([]);
  });

  it("every documented operation is exercised above with a success", () => {
    const exercised = new Set(
      CASES()
        .filter((c) => c[4] < 300 || c[2] === "/v1/billing/webhook")
        .map((c) => `${c[0]} ${c[1]}`),
    );
    const documented = Object.entries(all).flatMap(([p, item]) => Object.keys(item).map((m) => `${m} ${p}`));
    expect(documented.filter((d) => !exercised.has(d))).toEqual([]);
  });
});

describe("error examples quote the configured limits", () => {
  it("a server with DEMO_HOURLY_LIMIT=25 documents 25, not the default 60", async () => {
    const { testApp } = await import("../helpers/app.js");
    const t = await testApp({ DEMO_HOURLY_LIMIT: "25" });
    try {
      const text = await (await t.app.request("/v1/openapi.json")).text();
      expect(text).toContain("Demo tier limit of 25 calls per hour reached");
      expect(text).toContain(";q=25;w=3600");
      expect(text).not.toContain("limit of 60 calls");
    } finally {
      await t.close();
    }
  });
});

describe("the contact body the document describes is the one the server enforces", () => {
  it.each([
    [{ name: "Ada", email: "ada@example.com", message: "Hi" }, true],
    [{ name: "   ", email: "ada@example.com", message: "Hi" }, false],
    [{ name: "Ada\nBcc: x@evil.example", email: "ada@example.com", message: "Hi" }, false],
    [{ name: "Ada", email: "ada@localhost", message: "Hi" }, false],
    [{ name: "Ada", email: ".ada@example.com", message: "Hi" }, false],
    [{ name: "Ada", email: "a@b-.com", message: "Hi" }, true],
    [{ name: "Ada", email: "ada@exa_mple.com", message: "Hi" }, false],
    [{ name: "Ada", email: "ada+tag@sub.example.co.uk", message: "Hi" }, true],
    [{ name: "Ada", email: `${"a".repeat(64)}@${"b".repeat(63)}.com`, message: "Hi" }, true],
    [{ name: "Ada", email: "ada@example.com", subject: "", message: "Hi" }, false],
    [{ name: "Ada", email: "ada@example.com", message: "" }, false],
  ])("%j: document and server agree (valid: %s)", async (body, valid) => {
    const schema = ajv.compile({
      $ref: "openapi#/paths/~1v1~1mail~1contact/post/requestBody/content/application~1json/schema",
    });
    expect(schema(body)).toBe(valid);
    const res = await rig.t.app.request("/v1/mail/contact", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status === 200).toBe(valid);
  });
});
