import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type TestApp, testApp } from "../helpers/app.js";

/** One naming scheme across the lookups (`lat`, `lon`, `tz`), old and long names kept as aliases. */

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

describe("query parameters: lat, lon, tz, with aliases", () => {
  it.each([
    [
      "/v1/sun?latitude=51.5&longitude=-0.1&date=2025-06-21&timezone=Europe/Paris",
      "/v1/sun?lat=51.5&lon=-0.1&date=2025-06-21&tz=Europe/Paris",
    ],
    [
      "/v1/sun?lat=51.5&lon=-0.1&date=2025-06-21&time_zone=Asia/Tokyo",
      "/v1/sun?lat=51.5&lon=-0.1&date=2025-06-21&tz=Asia/Tokyo",
    ],
    ["/v1/moon?date=2024-01-25&latitude=51.5&longitude=-0.1", "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1"],
  ])("%s answers as %s", async (alias, canonical) => {
    expect(await json(alias)).toEqual(await json(canonical));
  });

  it("the canonical name wins when both are sent", async () => {
    const body = await json("/v1/sun?lat=51.5&lon=-0.1&date=2025-06-21&tz=Europe/London&timezone=Asia/Tokyo");
    expect(body.tz).toBe("Europe/London");
  });

  it("a bad alias value is refused under the canonical name", async () => {
    const res = await t.app.request("/v1/sun?latitude=100&lon=0");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('"lat"');
  });

  it("the document names the aliases of lat, lon and tz", async () => {
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, { get: { parameters: { name: string; description?: string }[] } }>;
    };
    const params = doc.paths["/v1/sun"]?.get.parameters ?? [];
    const described = (name: string) => params.find((p) => p.name === name)?.description ?? "";
    expect(described("lat")).toContain("`latitude`");
    expect(described("lon")).toContain("`longitude`");
    expect(described("tz")).toMatch(/`timezone` or `time_zone`/);
  });
});

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
