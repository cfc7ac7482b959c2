import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type TestApp, testApp } from "../helpers/app.js";

/**
 * One naming scheme across the lookups' answers (`lat`, `lon`, `tz`), the old names kept beside
 * them. The query parameters' aliases: test/http/query-aliases.test.ts.
 */

let t: TestApp;
let postcodes: UpstreamFake;
let meteo: UpstreamFake;
beforeAll(async () => {
  postcodes = await fakePostcodesIo();
  meteo = await fakeOpenMeteo();
  t = await testApp({
    DEMO_HOURLY_LIMIT: "1000000",
    POSTCODES_BASE_URL: postcodes.url,
    OPEN_METEO_BASE_URL: meteo.url,
  });
});
afterAll(async () => {
  await t.close();
  await Promise.all([postcodes.close(), meteo.close()]);
});

const json = async (path: string) => {
  const res = await t.app.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

describe("answers: lat, lon, tz everywhere; the old names stay for existing clients", () => {
  it("postcode: lat/lon next to latitude/longitude", async () => {
    const body = await json("/v1/postcode?postcode=SW1A2AA");
    expect(body).toMatchObject({ lat: body.latitude, lon: body.longitude });
    expect(typeof body.lat).toBe("number");
  });

  it("weather: location and forecast point lat/lon, tz next to timezone", async () => {
    const body = (await json("/v1/weather?postcode=SW1A2AA")) as {
      location: Record<string, unknown>;
      forecast_point: Record<string, unknown>;
      tz: string;
      timezone: string;
    };
    expect(body.location).toMatchObject({ lat: body.location.latitude, lon: body.location.longitude });
    expect(body.forecast_point).toMatchObject({
      lat: body.forecast_point.latitude,
      lon: body.forecast_point.longitude,
    });
    expect(typeof body.location.lat).toBe("number");
    expect(body.tz).toBe(body.timezone);
  });

  it("holidays and working days: tz next to timezone", async () => {
    for (const path of ["/v1/holidays?country=GB&year=2024", "/v1/holidays/working-days?country=GB&date=2024-12-24"]) {
      const body = await json(path);
      expect(body.tz).toBe("Europe/London");
      expect(body.timezone).toBe(body.tz);
    }
  });

  it("vat: country.tz next to country.time_zone", async () => {
    const body = (await json("/v1/vat?code=DE&date=2020-08-01")) as { country: Record<string, unknown> };
    expect(body.country.tz).toBe("Europe/Berlin");
    expect(body.country.time_zone).toBe(body.country.tz);
  });

  it("the document marks the old names deprecated", async () => {
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
      components: {
        schemas: Record<string, { properties: Record<string, { deprecated?: boolean; properties?: object }> }>;
      };
    };
    const s = doc.components.schemas;
    expect(s.Place?.properties.latitude?.deprecated).toBe(true);
    expect(s.Weather?.properties.timezone?.deprecated).toBe(true);
    expect(s.Holidays?.properties.timezone?.deprecated).toBe(true);
    expect(s.Place?.properties.lat?.deprecated).toBeUndefined();
  });
});
