import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";

/** What the document promises of itself, each checked through HTTP against the served document. */

type Parameter = { in: string; name: string; style?: string; explode?: boolean; schema?: Record<string, unknown> };
type Operation = {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
};
type Doc = { servers: { url: string }[]; paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;

let t: TestApp;
let doc: Doc;
beforeAll(async () => {
  t = await testApp({ PUBLIC_URL: "https://almanac.example" });
  doc = (await (await t.app.request("/v1/openapi.json")).json()) as Doc;
});
afterAll(() => t.close());

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

describe("array parameters (21.2)", () => {
  it.each([
    ["repeated", "types=public&types=bank"],
    ["comma-separated", "types=public,bank"],
    ["both", "types=public,bank&types=school"],
  ])("GET /v1/holidays takes types %s", async (_form, query) => {
    const res = await t.app.request(`/v1/holidays?country=DE&year=2026&${query}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { types: string[] };
    expect(body.types).toEqual(expect.arrayContaining(["public", "bank"]));
  });

  it("a repeated count= is taken as well", async () => {
    const res = await t.app.request(
      "/v1/holidays/working-days?country=DE&date=2026-12-23&add=1&count=public&count=bank",
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { count: string[] }).count).toEqual(["public", "bank"]);
  });

  it("an unknown type among repeated ones is still a 400 naming the parameter", async () => {
    const res = await t.app.request("/v1/holidays?country=DE&types=public&types=nope");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^query parameter "types"/);
  });

  it("every parameter declares style and explode; the lists are exploded arrays of their words, or one comma-separated string", () => {
    const params = operations().flatMap(({ path, method, op }) =>
      (op.parameters ?? []).map((p) => ({ where: `${method} ${path} ${p.in} ${p.name}`, p })),
    );
    expect(params.filter(({ p }) => p.style === undefined || p.explode === undefined).map((x) => x.where)).toEqual([]);
    for (const list of ["types", "count"]) {
      const p = params.find((x) => x.p.name === list)?.p;
      expect(p).toMatchObject({ in: "query", style: "form", explode: true });
      const [array, string] =
        (p?.schema as { anyOf?: { type: string; items?: { enum?: string[] } }[] } | undefined)?.anyOf ?? [];
      expect(array?.type).toBe("array");
      expect(array?.items?.enum).toContain("public");
      expect(string?.type).toBe("string");
    }
  });
});

describe("info", () => {
  it("names the licence of the description", () => {
    expect((doc.info as { license?: unknown }).license).toEqual({ name: "MIT", identifier: "MIT" });
  });

  it("lists every zone name the server takes for tz, links and renamed zones included", async () => {
    const tz = doc.paths["/v1/moon"]?.get?.parameters?.find((p) => p.name === "tz");
    const zones = (tz?.schema as { enum?: string[] } | undefined)?.enum;
    expect(zones).toEqual(expect.arrayContaining(["UTC", "Etc/UTC", "Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv"]));
    for (const zone of ["Asia/Kolkata", "Europe/Kyiv", "Etc/UTC", "US/Eastern"]) {
      const res = await t.app.request(`/v1/moon?date=2024-01-25&tz=${encodeURIComponent(zone)}`);
      expect(res.status, zone).toBe(200);
    }
  });
});

describe("servers (21.5)", () => {
  it("PUBLIC_URL first (a Node client needs an absolute base URL), then the relative one for /docs", () => {
    expect(doc.servers.map((s) => s.url)).toEqual(["https://almanac.example", "/"]);
  });
});

describe("authentication modelled once (21.7)", () => {
  it("no operation declares an Authorization header parameter: the security schemes say it", () => {
    const found = operations().filter(({ op }) =>
      (op.parameters ?? []).some((p) => p.in === "header" && p.name.toLowerCase() === "authorization"),
    );
    expect(found.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });

  it("/v1/usage requires a key: no key is 401, and the document says so", async () => {
    expect(doc.paths["/v1/usage"]?.get?.security).toEqual([{ bearer: [] }]);
    expect((await t.app.request("/v1/usage")).status).toBe(401);
  });

  it("the contact desk declares no security, and a key sent to it changes nothing", async () => {
    expect(doc.paths["/v1/mail/contact"]?.post?.security).toEqual([]);
    const res = await t.app.request("/v1/mail/contact", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Bearer alm_not_a_key" },
      body: JSON.stringify({ name: "Ada", email: "ada@example.com", message: "Hello" }),
    });
    expect(res.status).not.toBe(401);
  });

  it("every operation that accepts a key declares the 401 a rejected key gets", () => {
    const keyed = operations().filter(({ op }) => (op.security ?? []).some((s) => "bearer" in s));
    expect(keyed.length).toBeGreaterThan(0);
    expect(keyed.filter(({ op }) => !op.responses["401"]).map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });
});

describe("errors (21.8)", () => {
  it("the error schema is ErrorResponse (Error shadows the built-in in generated code)", () => {
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
    expect(schemas.ErrorResponse).toBeDefined();
    expect(schemas.Error).toBeUndefined();
  });

  it("every operation has a default response in that shape", () => {
    const missing = operations().filter(({ op }) => {
      const d = op.responses.default as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined;
      return d?.content?.["application/json"]?.schema?.$ref !== "#/components/schemas/ErrorResponse";
    });
    expect(missing.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });
});

describe("the Stripe webhook is a webhook, not a client operation (21.4)", () => {
  it("it is in `webhooks` with its Stripe-Signature header and event body, not in `paths`", () => {
    expect(Object.keys(doc.paths)).not.toContain("/v1/billing/webhook");
    const hook = (doc.webhooks as Record<string, Record<string, Operation & { requestBody?: unknown }>>)[
      "/v1/billing/webhook"
    ]?.post;
    expect(hook?.parameters).toContainEqual(
      expect.objectContaining({ in: "header", name: "Stripe-Signature", required: true }),
    );
    expect(hook?.requestBody).toMatchObject({
      required: true,
      content: { "application/json": { schema: expect.anything() } },
    });
  });
});

describe("headers (21.3)", () => {
  type Response = { headers?: Record<string, { $ref?: string }> };
  const responses = () =>
    operations().flatMap(({ path, method, op }) =>
      Object.entries(op.responses as Record<string, Response>).map(([status, r]) => ({
        where: `${method} ${path} ${status}`,
        status,
        r,
      })),
    );

  it("X-Request-Id is declared required, on every response", () => {
    const headers = (doc.components as { headers: Record<string, { required?: boolean }> }).headers;
    expect(headers["X-Request-Id"]?.required).toBe(true);
    expect(
      responses()
        .filter(({ r }) => !r.headers?.["X-Request-Id"])
        .map((x) => x.where),
    ).toEqual([]);
  });

  it("WWW-Authenticate is declared required: the renderer puts it on every 401", () => {
    const headers = (doc.components as { headers: Record<string, { required?: boolean }> }).headers;
    expect(headers["WWW-Authenticate"]?.required).toBe(true);
  });

  it("every 401 declares WWW-Authenticate, every 429 and 503 Retry-After", () => {
    const missing = responses().filter(
      ({ status, r }) =>
        (status === "401" && !r.headers?.["WWW-Authenticate"]) ||
        ((status === "429" || status === "503") && !r.headers?.["Retry-After"]),
    );
    expect(missing.map((x) => x.where)).toEqual([]);
  });

  it.each([
    ["no key on a keyed route", "/v1/usage", {}, "Bearer"],
    ["a malformed header", "/v1/usage", { Authorization: "Basic x" }, "Bearer"],
    ["a rejected key on a lookup", "/v1/moon", { Authorization: "Bearer alm_nope" }, 'Bearer error="invalid_token"'],
    [
      "a rejected key on classify",
      "/v1/vibe/classify",
      { Authorization: "Bearer alm_nope" },
      'Bearer error="invalid_token"',
    ],
  ])("%s: 401 with WWW-Authenticate (RFC 6750)", async (_case, path, headers, challenge) => {
    const init = path.includes("classify")
      ? { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: '["x"]' }
      : { headers };
    const res = await t.app.request(path, init);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(challenge);
  });
});
