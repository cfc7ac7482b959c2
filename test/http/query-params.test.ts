import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

/**
 * How the lookups answer query strings a client gets slightly wrong, through HTTP: every answer is
 * the spec's 400 `invalid_body` naming the parameter, in words a client can act on (never zod's
 * "Invalid input: expected string, received array").
 */
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000000" });
});
afterAll(() => t.close());

async function invalid(path: string) {
  const res = await t.app.request(path);
  expect(res.status, path).toBe(400);
  const { error } = await errorOf(res);
  expect(error.code).toBe("invalid_body");
  return error as { message: string; details: { formErrors: string[]; fieldErrors: Record<string, string[]> } };
}

describe("a parameter that takes one value, sent twice", () => {
  it.each([
    ["/v1/moon?date=2024-01-01&date=2024-01-02", "date"],
    ["/v1/moon?date=2024-01-01&date=", "date"],
    ["/v1/moon?phases=1&phases=2", "phases"],
    ["/v1/moon?lat=1&lat=2&lon=0", "lat"],
    ["/v1/moon?tz=UTC&tz=UTC", "tz"],
    ["/v1/sun?lat=1&lon=0&lon=0", "lon"],
    ["/v1/vat?code=DE&code=FR", "code"],
    ["/v1/vat?code=DE&date=2024-01-01&date=2024-01-01", "date"],
    ["/v1/holidays?country=GB&country=GB", "country"],
    ["/v1/holidays?country=GB&year=2024&year=2025", "year"],
    ["/v1/holidays?country=GB&region=ENG&region=SCT", "region"],
    ["/v1/holidays/working-days?country=GB&add=1&add=2", "add"],
    ["/v1/postcode?postcode=SW1A2AA&postcode=SW1A2AA", "postcode"],
    ["/v1/weather?postcode=SW1A2AA&postcode=EH11YZ", "postcode"],
  ])("%s → 400 naming %s: must be given once", async (path, name) => {
    const error = await invalid(path);
    expect(error.message).toBe(`query parameter "${name}" is invalid: must be given once`);
    expect(error.details.fieldErrors).toEqual({ [name]: ["must be given once"] });
  });

  it("a list parameter still takes repeats, and a bad value among them is named as a bad value", async () => {
    expect((await t.app.request("/v1/holidays?country=GB&year=2024&types=public&types=bank")).status).toBe(200);
    const error = await invalid("/v1/holidays?country=GB&year=2024&types=public&types=nope");
    expect(error.message).toBe(
      'query parameter "types" is invalid: must be a comma-separated list of public, bank, optional, school, observance',
    );
  });
});

describe("a required parameter sent empty is missing", () => {
  it.each([
    ["/v1/postcode?postcode=", "postcode"],
    ["/v1/postcode?postcode=%20%20", "postcode"],
    ["/v1/weather?postcode=", "postcode"],
    ["/v1/vat?code=", "code"],
    ["/v1/vat?code=%20&date=2024-01-01", "code"],
    ["/v1/holidays?country=", "country"],
    ["/v1/holidays/working-days?country=", "country"],
    ["/v1/sun?lat=&lon=0", "lat"],
    ["/v1/moon?lat=51&lon=", "lon"],
  ])("%s → 400 query parameter %j is required", async (path, name) => {
    const error = await invalid(path);
    expect(error.message).toBe(`query parameter "${name}" is required`);
  });

  it("a missing parameter's fieldErrors say it is required, not what zod expected", async () => {
    for (const [path, name] of [
      ["/v1/postcode", "postcode"],
      ["/v1/postcode?postcode=", "postcode"],
      ["/v1/vat?date=2024-01-01", "code"],
      ["/v1/holidays", "country"],
    ] as const) {
      expect((await invalid(path)).details.fieldErrors, path).toEqual({ [name]: ["is required"] });
    }
  });

  it("an optional parameter sent empty is still a bad value, named", async () => {
    expect((await invalid("/v1/moon?date=")).message).toMatch(/^query parameter "date" is invalid: must be a date/);
    expect((await invalid("/v1/vat?code=DE&date=")).message).toMatch(/^query parameter "date" is invalid: /);
    expect((await invalid("/v1/holidays?country=GB&year=")).message).toBe(
      'query parameter "year" is invalid: must be a whole number',
    );
  });
});

describe("a date-time offset sent with a bare +", () => {
  // In a query string `+` is a space (application/x-www-form-urlencoded), so `…+05:00` arrives as
  // `… 05:00`: still a 400, but one that says how to send it.
  it.each([
    ["/v1/moon?date=2024-01-25T12:00:00+05:00", "05:00"],
    ["/v1/sun?lat=51&lon=0&date=2024-06-21T12:00+01:00", "01:00"],
  ])("%s → 400 saying how to send the +", async (path, offset) => {
    const error = await invalid(path);
    expect(error.message).toBe(
      'query parameter "date" is invalid: must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999; ' +
        `a + in a query string is a space: send the offset as %2B${offset} (or Z)`,
    );
  });

  it("the same offset sent as %2B is read", async () => {
    expect((await t.app.request("/v1/moon?date=2024-01-25T12:00:00%2B05:00")).status).toBe(200);
  });
});

describe("fieldErrors say each problem once", () => {
  const CODE = "must be a two-letter country code (e.g. DE, EL, XI) or a VAT number (e.g. DE136695976)";
  it.each([
    ["/v1/vat?code=D", "code", CODE],
    [`/v1/vat?code=${"D".repeat(30)}`, "code", "must be at most 24 characters"],
    ["/v1/vat?code=DE&date=2024-1-1", "date", "must be a calendar date YYYY-MM-DD"],
    ["/v1/vat?code=DE&date=", "date", "must be a calendar date YYYY-MM-DD"],
    ["/v1/vat?code=DE&date=2024-02-30", "date", "must be a real calendar date YYYY-MM-DD"],
    ["/v1/holidays/working-days?country=GB&date=", "date", "must be a date YYYY-MM-DD between 1900 and 2199"],
  ])("%s → %s: [%s]", async (path, name, message) => {
    const error = await invalid(path);
    expect(error.message).toBe(`query parameter "${name}" is invalid: ${message}`);
    expect(error.details.fieldErrors).toEqual({ [name]: [message] });
  });
});
