import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VatResponseBody } from "../../src/features/vat/schema.js";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
let clock = new Date("2024-08-31T22:30:00Z");

beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "100000" }, () => ({ now: () => clock }));
});
afterAll(() => t.close());

const get = (query: string) => t.app.request(`/v1/vat${query}`);
const ok = async (query: string) => {
  const res = await get(query);
  expect(res.status, query).toBe(200);
  return (await res.json()) as VatResponseBody;
};

describe("GET /v1/vat", () => {
  it("answers Germany's temporary 16 % / 5 % for 2020-08-01 with period bounds, history, upcoming and sources", async () => {
    const body = await ok("?code=DE&date=2020-08-01");
    expect(body.country).toMatchObject({ code: "DE", name: "Germany", vat_prefix: "DE", time_zone: "Europe/Berlin" });
    expect(body.rates).toEqual({ standard: 16, reduced: [5], super_reduced: null, parking: null, special: [] });
    expect([body.effective_from, body.effective_to]).toEqual(["2020-07-01", "2020-12-31"]);
    expect(body.history.map((p) => p.rates.standard)).toEqual([19]);
    expect(body.upcoming.map((p) => [p.effective_from, p.rates.standard])).toEqual([["2021-01-01", 19]]);
    expect(body.source.name).toContain("Corona-Steuerhilfegesetz");
    expect(body.exceptions.map((e) => e.name)).toContain("Heligoland");
    expect(body.last_verified).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body).not.toHaveProperty("vat_number");
  });

  // Skatteetaten's VAT rates: 25 % general, 15 % food, 12 % transport/accommodation/…, and 11.11 % on the
  // first-hand sale of raw fish — a rate of its own, not a reduced rate of the general scheme.
  it("lists Norway's 11.11 % on raw fish as a special rate, with its source, in every period", async () => {
    const body = await ok("?code=NO&date=2024-06-01");
    expect([body.rates.standard, body.rates.reduced]).toEqual([25, [15, 12]]);
    expect(body.rates.special).toEqual([
      {
        rate: 11.11,
        applies_to: expect.stringMatching(/raw fish/),
        source: {
          name: expect.stringMatching(/Skatteetaten/),
          url: expect.stringMatching(/^https:\/\/www\.skatteetaten\.no\//),
        },
      },
    ]);
    expect(body.history.every((p) => p.rates.special.some((r) => r.rate === 11.11))).toBe(true);
    expect((await ok("?code=DE&date=2024-06-01")).rates.special).toEqual([]);
  });

  it("defaults the date to today in the country's civil time", async () => {
    clock = new Date("2024-08-31T22:30:00Z"); // 2024-09-01 01:30 in Helsinki, still 31 August in London
    const fi = await ok("?code=FI");
    expect([fi.date, fi.rates.standard, fi.query.date]).toEqual(["2024-09-01", 25.5, null]);
    const gb = await ok("?code=gb");
    expect(gb.date).toBe("2024-08-31");
    clock = new Date("2025-07-31T21:30:00Z"); // 2025-08-01 00:30 in Bucharest
    expect((await ok("?code=RO")).rates).toMatchObject({ standard: 21, reduced: [11] });
  });

  it("takes codes case-insensitively with EL = Greece, UK = GB and XI = Northern Ireland", async () => {
    expect((await ok("?code=el&date=2024-05-05")).country).toMatchObject({ code: "GR", vat_prefix: "EL" });
    expect((await ok("?code=UK&date=2024-05-05")).country.code).toBe("GB");
    const xi = await ok("?code=xi&date=2024-05-05");
    expect([xi.country.code, xi.rates.standard]).toEqual(["XI", 20]);
    expect((await ok("?code=%20ch%20&date=2024-01-01")).rates.standard).toBe(8.1);
  });

  it("adds an offline jsvat verdict to a VAT-number-shaped code, with no registry when VIES is not configured", async () => {
    const body = await ok("?code=de%20136-695.976&date=2020-08-01");
    expect(body.rates.standard).toBe(16);
    expect(body.vat_number).toEqual({
      normalized: "DE136695976",
      supported: true,
      format_valid: true,
      checksum_valid: true,
      verdict: "valid",
      registration: {
        status: "unknown",
        checked: false,
        registry: null,
        reason: "not_configured",
        name: null,
        address: null,
        checked_at: null,
        cached: false,
      },
    });
    expect((await ok("?code=DE136695977")).vat_number).toMatchObject({ verdict: "invalid_checksum" });
    expect((await ok("?code=DE1234")).vat_number).toMatchObject({ verdict: "invalid_format", checksum_valid: null });
    expect((await ok("?code=ATU12345675")).country.code).toBe("AT");
    expect((await ok("?code=CHE-116.281.710%20MWST")).vat_number?.verdict).toBe("valid");
    expect((await ok("?code=GR094259216")).vat_number).toMatchObject({ normalized: "EL094259216", verdict: "valid" });
    expect((await ok("?code=XI980780684")).vat_number).toMatchObject({ verdict: "valid" });
    expect((await ok("?code=IS12345")).vat_number).toMatchObject({ supported: false, verdict: "unsupported" });
  });

  it.each(["?date=2020-08-01", "?code=&date=2020-08-01", "?code=%20"])(
    '400 invalid_body "query parameter "code" is required" when code is missing or empty: %s',
    async (query) => {
      const res = await get(query);
      expect(res.status).toBe(400);
      const { error } = await errorOf(res);
      expect(error.code).toBe("invalid_body");
      expect(error.message).toBe('query parameter "code" is required');
      expect(error.reason).toBeUndefined();
    },
  );

  it.each([
    ["D", "must be a two-letter country code"],
    ["1234", "must be a two-letter country code"],
    ["DE!!", "must be a two-letter country code"],
    ["GERMANY", "must be a two-letter country code"],
    ["DE1234567890123456789012345", "must be at most 24 characters"],
  ])("400 invalid_body naming code for a malformed code %j", async (code, wording) => {
    const res = await get(`?code=${encodeURIComponent(code)}`);
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toContain('query parameter "code" is invalid: ');
    expect(error.message).toContain(wording);
  });

  it.each(["2020-02-30", "2020-8-1", "yesterday", "2020-08-01T10:00:00Z", ""])(
    "400 invalid_body naming date for %j",
    async (date) => {
      const res = await get(`?code=DE&date=${encodeURIComponent(date)}`);
      expect(res.status).toBe(400);
      const { error } = await errorOf(res);
      expect(error.code).toBe("invalid_body");
      expect(error.message).toMatch(/^query parameter "date" is invalid: must be a (real )?calendar date YYYY-MM-DD$/);
    },
  );

  it("404 not_found naming the code for a country we have no VAT data for", async () => {
    for (const [query, named] of [
      ["?code=US", '"US"'],
      ["?code=us123456789", '"US"'],
    ] as const) {
      const res = await get(query);
      expect(res.status).toBe(404);
      const { error } = await errorOf(res);
      expect(error.code).toBe("not_found");
      expect(error.reason).toBe("unknown_country");
      expect(error.message).toContain(named);
    }
  });

  it("404 not_found when the date is before the country's data starts", async () => {
    const res = await get("?code=NL&date=2010-01-01");
    expect(res.status).toBe(404);
    const { error } = await errorOf(res);
    expect([error.code, error.reason]).toEqual(["not_found", "before_coverage"]);
    expect(error.message).toBe("No VAT rates on record for NL on 2010-01-01: the data starts on 2019-01-01.");
  });

  it("is documented in /v1/openapi.json with the code and date parameters and examples", async () => {
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        { get: Record<string, unknown> & { parameters: { name: string; in: string; required?: boolean }[] } }
      >;
    };
    const op = doc.paths["/v1/vat"]?.get;
    expect(op).toBeDefined();
    expect(op?.parameters.map((p) => [p.name, p.in, p.required ?? false])).toEqual([
      ["code", "query", true],
      ["date", "query", false],
      ["If-None-Match", "header", false],
    ]);
    const responses = op?.responses as Record<
      string,
      { content: Record<string, { example?: unknown; examples?: object }> }
    >;
    expect(responses["200"]?.content["application/json"]?.example).toMatchObject({ rates: { standard: 16 } });
    expect(Object.keys(responses["400"]?.content["application/json"]?.examples ?? {})).toContain("code_missing");
    expect(Object.keys(responses["404"]?.content["application/json"]?.examples ?? {})).toContain("unknown_country");
  });
});
