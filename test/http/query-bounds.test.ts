import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

/**
 * Every documented range of the lookups' parameters at its edges, through HTTP: the value at the
 * limit is served (200), the next one past it is the spec's 400 `invalid_body` naming the parameter
 * in the documented words (docs/api.md).
 */
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000000" });
});
afterAll(() => t.close());

const DATE_WORDS = "must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999";

// [served at the limit, refused one past it, the 400's message]
const EDGES: [string, string, string][] = [
  [
    "/v1/moon?lat=90&lon=0",
    "/v1/moon?lat=90.000001&lon=0",
    'query parameter "lat" is invalid: must be between -90 and 90',
  ],
  [
    "/v1/moon?lat=-90&lon=0",
    "/v1/moon?lat=-90.000001&lon=0",
    'query parameter "lat" is invalid: must be between -90 and 90',
  ],
  [
    "/v1/moon?lat=0&lon=180",
    "/v1/moon?lat=0&lon=180.000001",
    'query parameter "lon" is invalid: must be between -180 and 180',
  ],
  [
    "/v1/moon?lat=0&lon=-180",
    "/v1/moon?lat=0&lon=-180.000001",
    'query parameter "lon" is invalid: must be between -180 and 180',
  ],
  ["/v1/moon?phases=1", "/v1/moon?phases=0", 'query parameter "phases" is invalid: must be between 1 and 12'],
  ["/v1/moon?phases=12", "/v1/moon?phases=13", 'query parameter "phases" is invalid: must be between 1 and 12'],
  ["/v1/moon?date=1000-01-01", "/v1/moon?date=0999-12-31", `query parameter "date" is invalid: ${DATE_WORDS}`],
  ["/v1/moon?date=2999-12-31", "/v1/moon?date=3000-01-01", `query parameter "date" is invalid: ${DATE_WORDS}`],
  ["/v1/moon?date=2024-02-29", "/v1/moon?date=2023-02-29", `query parameter "date" is invalid: ${DATE_WORDS}`],
  [
    "/v1/moon?date=2024-01-25T23:59:59.999999999%2B23:59",
    "/v1/moon?date=2024-01-25T23:59:59.999999999%2B24:00",
    `query parameter "date" is invalid: ${DATE_WORDS}`,
  ],
  [
    "/v1/sun?lat=-90&lon=-180&date=2999-12-31",
    "/v1/sun?lat=-90&lon=-180&date=3000-01-01",
    `query parameter "date" is invalid: ${DATE_WORDS}`,
  ],
  [
    "/v1/sun?lat=90&lon=180",
    "/v1/sun?lat=90&lon=180.5",
    'query parameter "lon" is invalid: must be between -180 and 180',
  ],
  [
    "/v1/holidays?country=GB&year=1900",
    "/v1/holidays?country=GB&year=1899",
    'query parameter "year" is invalid: must be between 1900 and 2199',
  ],
  [
    "/v1/holidays?country=GB&year=2199",
    "/v1/holidays?country=GB&year=2200",
    'query parameter "year" is invalid: must be between 1900 and 2199',
  ],
  [
    "/v1/holidays/working-days?country=GB&date=2024-01-02&add=1000",
    "/v1/holidays/working-days?country=GB&date=2024-01-02&add=1001",
    'query parameter "add" is invalid: must be between -1000 and 1000',
  ],
  [
    "/v1/holidays/working-days?country=GB&date=2024-01-02&add=-1000",
    "/v1/holidays/working-days?country=GB&date=2024-01-02&add=-1001",
    'query parameter "add" is invalid: must be between -1000 and 1000',
  ],
  [
    "/v1/holidays/working-days?country=GB&date=1900-01-01",
    "/v1/holidays/working-days?country=GB&date=1899-12-31",
    'query parameter "date" is invalid: must be a date YYYY-MM-DD between 1900 and 2199',
  ],
  [
    "/v1/holidays/working-days?country=GB&date=2199-12-31",
    "/v1/holidays/working-days?country=GB&date=2200-01-01",
    'query parameter "date" is invalid: must be a date YYYY-MM-DD between 1900 and 2199',
  ],
  [
    "/v1/vat?code=DE-1-3-6-6-9-5-9-7-6----",
    "/v1/vat?code=DE-1-3-6-6-9-5-9-7-6-----",
    'query parameter "code" is invalid: must be at most 24 characters',
  ],
  [
    "/v1/vat?code=DE&date=2024-02-29",
    "/v1/vat?code=DE&date=2023-02-29",
    'query parameter "date" is invalid: must be a real calendar date YYYY-MM-DD',
  ],
];

describe("parameter ranges at their edges", () => {
  it.each(EDGES)("%s → 200; %s → 400", async (at, past, message) => {
    const ok = await t.app.request(at);
    expect(ok.status, at).toBe(200);
    const refused = await t.app.request(past);
    expect(refused.status, past).toBe(400);
    expect((await errorOf(refused)).error).toMatchObject({ code: "invalid_body", message });
  });
});
