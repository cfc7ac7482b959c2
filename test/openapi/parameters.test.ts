import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";

/**
 * The numeric query parameters: their types and ranges are the Zod schemas' (no hand table), and
 * document and server agree on the same values, exponent form included (21.1, 21.6).
 */

type Parameter = { in: string; name: string; schema: Record<string, unknown> };
type Doc = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

let t: TestApp;
let doc: Doc;
const ajv = new Ajv2020({ strict: false });
beforeAll(async () => {
  t = await testApp();
  doc = (await (await t.app.request("/v1/openapi.json")).json()) as Doc;
});
afterAll(() => t.close());

const param = (path: string, name: string) => doc.paths[path]?.get?.parameters?.find((p) => p.name === name);

/** A query value as the number JSON would read it, else the string (which a number schema refuses). */
const asJson = (value: string) => (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value) ? Number(value) : value);

describe("numeric query parameters", () => {
  it.each([
    ["/v1/moon", "lat", { type: "number", minimum: -90, maximum: 90 }],
    ["/v1/sun", "lon", { type: "number", minimum: -180, maximum: 180 }],
    ["/v1/moon", "phases", { type: "integer", minimum: 1, maximum: 12 }],
    ["/v1/holidays", "year", { type: "integer", minimum: 1900, maximum: 2199 }],
    ["/v1/holidays/working-days", "add", { type: "integer", minimum: -1000, maximum: 1000 }],
  ])("%s %s is documented as %j, with a number example", (path, name, shape) => {
    const p = param(path, name);
    expect(p?.schema).toMatchObject(shape);
    expect(typeof p?.schema.example).toBe("number");
  });

  it("exponent form, as JavaScript writes small numbers (String(1e-7)), is accepted", async () => {
    const res = await t.app.request(`/v1/sun?lat=${1e-7}&lon=${-1.5e-7}&date=2024-06-21`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { location: { lat: number; lon: number } }).location).toEqual({
      lat: 1e-7,
      lon: -1.5e-7,
    });
  });

  it.each([
    ["lat", "1e-7"],
    ["lat", "5.15E1"],
    ["lat", "-90"],
    ["lat", "90.0"],
    ["lat", "91"],
    ["lat", "9e1"],
    ["lat", "9.1e1"],
    ["lat", "1e309"],
    ["lat", "north"],
    ["lat", ""],
    ["phases", "3"],
    ["phases", "0"],
    ["phases", "13"],
    ["phases", "2.5"],
    ["phases", "many"],
  ])("moon %s=%s: the document and the server agree", async (name, value) => {
    const schema = param("/v1/moon", name)?.schema ?? {};
    const documented = ajv.validate(schema, asJson(value));
    const other = name === "lat" ? "&lon=0" : "";
    const res = await t.app.request(`/v1/moon?date=2024-01-25&${name}=${encodeURIComponent(value)}${other}`);
    expect(res.status === 200, `document says ${documented}, server ${res.status}`).toBe(documented);
  });
});

describe("date on moon and sun (21.6)", () => {
  it.each(["/v1/moon", "/v1/sun"])("%s: a string with a pattern and the year range, not an anyOf", (path) => {
    const schema = param(path, "date")?.schema ?? {};
    expect(schema).toMatchObject({ type: "string", pattern: expect.any(String) });
    expect(schema.anyOf).toBeUndefined();
    expect(String(schema.description)).toContain("years 1000 to 2999");
  });

  // Not here: a well-formed day that does not exist (2024-02-30): the server refuses it, a pattern cannot.
  it.each([
    "2024-01-25",
    "2024-01-25T12:00:00Z",
    "2024-01-25T12:00",
    "2024-01-25T12:00:00.123+05:30",
    "1000-01-01",
    "2999-12-31",
    "0999-12-31",
    "3000-01-01",
    "24.01.2024",
    "2024-01-25 12:00",
    "tomorrow",
  ])("moon date=%s: the document and the server agree", async (value) => {
    const documented = ajv.validate(param("/v1/moon", "date")?.schema ?? {}, value);
    const res = await t.app.request(`/v1/moon?date=${encodeURIComponent(value)}`);
    expect(res.status === 200, `document says ${documented}, server ${res.status}`).toBe(documented);
  });
});

describe("input lengths and list sizes (OWASP API4): declared, and enforced by the server", () => {
  type Op = { parameters?: Parameter[] };
  const inputs = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Op>).flatMap(([method, op]) =>
        (op.parameters ?? []).map((p) => ({ method, path, p })),
      ),
    );

  it("every string parameter states a maxLength (or enum/const), every list a maxItems", () => {
    const open = inputs()
      .filter(({ p }) => {
        const s = p.schema as { type?: string; maxLength?: number; maxItems?: number; enum?: unknown; const?: unknown };
        if (s.type === "array") return s.maxItems === undefined;
        return s.type === "string" && s.maxLength === undefined && s.enum === undefined && s.const === undefined;
      })
      .map(({ method, path, p }) => `${method} ${path} ${p.name}`);
    expect(open).toEqual([]);
  });

  it("a query value one character over its maxLength, or a list one item over its maxItems, is refused with 400", async () => {
    const over = inputs().filter(
      ({ method, p }) =>
        method === "get" && p.in === "query" && (p.schema.maxLength !== undefined || p.schema.maxItems !== undefined),
    );
    expect(over.length).toBeGreaterThanOrEqual(8);
    const accepted: string[] = [];
    for (const { path, p } of over) {
      const query =
        p.schema.maxItems !== undefined
          ? Array.from({ length: Number(p.schema.maxItems) + 1 }, () => `${p.name}=public`).join("&")
          : `${p.name}=${"A".repeat(Number(p.schema.maxLength) + 1)}`;
      const base = path === "/v1/vat" ? "code=DE&" : path.startsWith("/v1/holidays") ? "country=GB&" : "";
      const res = await t.app.request(`${path}?${base}${query}`);
      if (res.status !== 400) accepted.push(`${path} ${p.name}: ${res.status}`);
    }
    expect(accepted).toEqual([]);
  });
});
