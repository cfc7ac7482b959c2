import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../../../test/helpers/app.js";
import { documentedGet, exampleOf, examplesOf } from "../../../test/helpers/openapi.js";
import type { SunResponseBody } from "./schema.js";

const TWO_MINUTES_S = 120;

/** Seconds between an ISO instant from the API and a published local clock time. */
const offBy = (iso: string | null, published: string) => Math.abs(Date.parse(iso ?? "") - Date.parse(published)) / 1000;

describe("GET /v1/sun", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ DEMO_HOURLY_LIMIT: "100000" });
  });
  afterAll(() => t.close());

  const get = async (query: string) => {
    const res = await t.app.request(`/v1/sun${query}`);
    return { res, body: (await res.json()) as SunResponseBody };
  };

  // London, Houses of Parliament (51.5°N, 0.125°W), midsummer 2025: sunrise 04:42:38 BST,
  // sunset 21:22:06 BST, day 16h39m28s (diamondgeezer, "Summer Solstice London", 20 June 2025).
  it("London at the 2025 June solstice matches published times to ±2 minutes", async () => {
    const { res, body } = await get("?lat=51.5&lon=-0.125&date=2025-06-21");
    expect(res.status).toBe(200);
    expect(body.tz).toBe("Europe/London");
    expect(offBy(body.sunrise, "2025-06-21T04:42:38+01:00")).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(offBy(body.sunset, "2025-06-21T21:22:06+01:00")).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(Math.abs(body.day_length_seconds - (16 * 3600 + 39 * 60 + 28))).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(body.sunrise).toMatch(/\+01:00$/);
    expect(body.polar).toBeNull();
    // No astronomical darkness in London around midsummer.
    expect(body.twilight.astronomical).toEqual({ begin: null, end: null });
    expect(String(body.twilight.civil.begin) < String(body.sunrise)).toBe(true);
    expect(String(body.twilight.nautical.end) > String(body.twilight.civil.end)).toBe(true);
    expect(body.solar_noon).toMatch(/^2025-06-21T13:0[0-5]:\d\d\+01:00$/);
  });

  // London near the 2013 March equinox: 18 March, 06:08 to 18:10 GMT, 12h 2m 45s
  // (jpc0604.wordpress.com, "Equinox – again!", 20 March 2013).
  it("London near the March equinox", async () => {
    const { body } = await get("?lat=51.5074&lon=-0.1278&date=2013-03-18");
    expect(offBy(body.sunrise, "2013-03-18T06:08:00+00:00")).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(offBy(body.sunset, "2013-03-18T18:10:00+00:00")).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(Math.abs(body.day_length_seconds - (12 * 3600 + 2 * 60 + 45))).toBeLessThanOrEqual(TWO_MINUTES_S);
  });

  // London, 22 December 2007: 7h 49m 40s of day, sunset 15:53 (flat36.blogspot.com, October 2007).
  it("London at the December solstice", async () => {
    const { body } = await get("?lat=51.5074&lon=-0.1278&date=2007-12-22");
    expect(offBy(body.sunset, "2007-12-22T15:53:00+00:00")).toBeLessThanOrEqual(TWO_MINUTES_S);
    expect(Math.abs(body.day_length_seconds - (7 * 3600 + 49 * 60 + 40))).toBeLessThanOrEqual(TWO_MINUTES_S);
  });

  it("gives times with the offset in force: London's clocks go forward on 2024-03-31", async () => {
    const before = (await get("?lat=51.5&lon=-0.125&date=2024-03-30")).body;
    const after = (await get("?lat=51.5&lon=-0.125&date=2024-03-31")).body;
    expect(before.sunrise).toMatch(/^2024-03-30T05:\d\d:\d\d\+00:00$/);
    expect(after.sunrise).toMatch(/^2024-03-31T06:\d\d:\d\d\+01:00$/);
    // The same instant of day within two minutes, one hour later on the clock.
    expect(Date.parse(String(after.sunrise)) - Date.parse(String(before.sunrise))).toBeGreaterThan(
      86_400_000 - 180_000,
    );
    expect(Date.parse(String(after.sunrise)) - Date.parse(String(before.sunrise))).toBeLessThan(86_400_000);
  });

  it("Tromsø in June: midnight sun, stated as polar day with null times", async () => {
    const { body } = await get("?lat=69.6492&lon=18.9553&date=2024-06-21");
    expect(body.tz).toBe("Europe/Oslo");
    expect(body.polar).toBe("day");
    expect(body.sunrise).toBeNull();
    expect(body.sunset).toBeNull();
    expect(body.day_length_seconds).toBe(86_400);
    expect(String(body.next_sunset) > "2024-07-15").toBe(true);
    expect(body.solar_noon_altitude_deg).toBeGreaterThan(40);
  });

  // Tromsø's polar night lasts from late November until the Sun returns around 15 January.
  it("Tromsø in December: polar night, no daylight, the Sun back in mid-January", async () => {
    const { body } = await get("?lat=69.6492&lon=18.9553&date=2024-12-21");
    expect(body.polar).toBe("night");
    expect(body.sunrise).toBeNull();
    expect(body.sunset).toBeNull();
    expect(body.day_length_seconds).toBe(0);
    const back = String(body.next_sunrise).slice(0, 10);
    expect(back >= "2025-01-14" && back <= "2025-01-16").toBe(true);
    expect(body.solar_noon_altitude_deg).toBeLessThan(0);
    expect(body.twilight.civil.begin).not.toBeNull();
  });

  it.each([
    ["?lon=0", 'query parameter "lat" is required'],
    ["?lat=0", 'query parameter "lon" is required'],
    ["?lat=-90.1&lon=0", 'query parameter "lat" is invalid: must be between -90 and 90'],
    ["?lat=0&lon=181", 'query parameter "lon" is invalid: must be between -180 and 180'],
    ["?lat=0&lon=1e3", 'query parameter "lon" is invalid: must be between -180 and 180'],
    [
      "?lat=0&lon=0&date=2024-13-01",
      'query parameter "date" is invalid: must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999',
    ],
    [
      "?lat=0&lon=0&tz=Europe/Atlantis",
      'query parameter "tz" is invalid: must be an IANA time zone such as Europe/London',
    ],
  ])("%s → 400 invalid_body naming the parameter", async (query, message) => {
    const res = await t.app.request(`/v1/sun${query}`);
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toBe(message);
  });

  it("is documented in /v1/openapi.json with its parameters and examples", async () => {
    const op = await documentedGet(t.app, "/v1/sun");
    const params = Object.fromEntries(op.parameters.map((p) => [p.name, p.required]));
    expect(params).toEqual({ date: false, lat: true, lon: true, tz: false });
    expect(exampleOf<SunResponseBody>(op, 200).day_length_seconds).toBeGreaterThan(0);
    expect(Object.keys(examplesOf(op, 400))).toContain("lat_missing");
  });
});
