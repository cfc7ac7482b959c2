import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { q, type WeatherRig, weatherRig } from "./setup.js";

type Weather = {
  location: Record<string, unknown>;
  forecast_point: { latitude: number; longitude: number; elevation: number | null };
  timezone: string;
  current: {
    observed_at: string;
    weather: { code: number; text: string; icon: string };
    is_day: boolean;
    temperature: number;
    feels_like: number;
    humidity: number;
    precipitation: number;
    wind: { speed: number; direction: number; gusts: number };
  };
  daily: {
    date: string;
    weather: { code: number; text: string; icon: string };
    temperature: { min: number; max: number };
    feels_like: { min: number; max: number };
    precipitation: { sum: number; probability: number };
    wind_speed_max: number;
    sunrise: string;
    sunset: string;
  }[];
  units: Record<string, string>;
  sources: { name: string; attribution: string; licence: string }[];
};

describe("GET /v1/weather", () => {
  let rig: WeatherRig;
  beforeAll(async () => {
    rig = await weatherRig();
  });
  afterAll(() => rig.close());
  beforeEach(() => {
    rig.postcodes.reset();
    rig.meteo.reset();
  });

  it("resolves any spacing and case, and answers location, current conditions and 7 days", async () => {
    const res = await rig.get(`/v1/weather?postcode=${q(" sw1a2aa ")}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    // About now: a cache must ask again (a 200 without Cache-Control is heuristically cacheable).
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const body = (await res.json()) as Weather;
    expect(body.location).toEqual({
      postcode: "SW1A 2AA",
      outcode: "SW1A",
      lat: 51.50354,
      lon: -0.127695,
      latitude: 51.50354,
      longitude: -0.127695,
      district: "Westminster",
      region: "London",
      country: "England",
    });
    expect(body.timezone).toBe("Europe/London");
    expect(body.current).toEqual({
      observed_at: "2024-10-24T14:15:00+01:00",
      weather: { code: 2, text: "Partly cloudy", icon: "partly-cloudy-day" },
      is_day: true,
      temperature: 14.2,
      feels_like: 12.1,
      humidity: 71,
      precipitation: 0,
      wind: { speed: 11.5, direction: 230, gusts: 24.8 },
    });
    expect(body.daily).toHaveLength(7);
    expect(body.daily.map((d) => d.date)).toEqual([
      "2024-10-24",
      "2024-10-25",
      "2024-10-26",
      "2024-10-27",
      "2024-10-28",
      "2024-10-29",
      "2024-10-30",
    ]);
    expect(body.daily[2]).toMatchObject({
      weather: { code: 61, text: "Slight rain", icon: "rain" },
      temperature: { min: 8.1, max: 14.3 },
      precipitation: { sum: 2.4, probability: 20 },
    });
    // The week crosses the end of British Summer Time: each instant carries its own offset.
    expect(body.daily[0]?.sunrise).toBe("2024-10-24T07:32:00+01:00");
    expect(body.daily[0]?.sunset).toBe("2024-10-24T18:48:00+01:00");
    expect(body.daily[3]?.sunrise).toBe("2024-10-27T06:38:00+00:00");
    expect(body.daily[6]?.sunset).toBe("2024-10-30T17:36:00+00:00");
    expect(body.units).toMatchObject({ temperature: "°C", wind_speed: "km/h", precipitation: "mm", humidity: "%" });
  });

  it("names the licences' required attributions in sources", async () => {
    const body = (await (await rig.get("/v1/weather?postcode=SW1A2AA")).json()) as Weather;
    const text = body.sources.map((s) => `${s.licence} ${s.attribution}`).join("\n");
    expect(text).toContain("CC BY 4.0");
    expect(text).toContain("Weather data by Open-Meteo.com");
    expect(text).toContain("Contains OS data © Crown copyright and database right");
    expect(text).toContain("Royal Mail data");
    expect(text).toContain("Open Government Licence");
  });

  it("asks Open-Meteo for the documented variables at the rounded location, in Europe/London", async () => {
    expect((await rig.get("/v1/weather?postcode=EH1%201YZ")).status).toBe(200);
    expect(rig.postcodes.paths).toEqual(["/postcodes/EH1%201YZ"]);
    expect(rig.meteo.paths).toHaveLength(1);
    const url = new URL(rig.meteo.paths[0] ?? "", "http://x");
    expect(url.pathname).toBe("/v1/forecast");
    expect(url.searchParams.get("latitude")).toBe("55.95");
    expect(url.searchParams.get("longitude")).toBe("-3.19");
    expect(url.searchParams.get("timezone")).toBe("Europe/London");
    expect(url.searchParams.get("forecast_days")).toBe("7");
    expect(url.searchParams.get("current")?.split(",")).toContain("wind_gusts_10m");
    expect(url.searchParams.get("daily")?.split(",")).toContain("precipitation_probability_max");
  });

  it("serves repeats from the cache: one resolver call and one forecast call", async () => {
    const fresh = await weatherRig();
    try {
      for (const pc of ["SW1A 2AA", "sw1a 2aa", "SW1A2AA"]) {
        expect((await fresh.get(`/v1/weather?postcode=${q(pc)}`)).status).toBe(200);
      }
      expect((await fresh.get("/v1/postcode?postcode=SW1A2AA")).status).toBe(200);
      expect(fresh.postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
      expect(fresh.meteo.paths).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it.each([
    ["SW1A 2A", "invalid_format"],
    ["12345", "invalid_format"],
    ["ZE9 9ZZ", "unknown"],
    ["E1W 1UU", "terminated"],
    ["GY1 1AA", "no_location"],
  ])("%s → 404 not_found, reason %s", async (postcode, reason) => {
    const res = await rig.get(`/v1/weather?postcode=${q(postcode)}`);
    expect(res.status).toBe(404);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({ code: "not_found", message: "postcode not found", reason });
    expect(rig.meteo.paths).toHaveLength(0);
  });

  it("tells when a terminated postcode was retired", async () => {
    const { error } = await errorOf(await rig.get("/v1/weather?postcode=e1w1uu"));
    expect(error.details).toEqual({ postcode: "E1W 1UU", year_terminated: 2007, month_terminated: 12 });
  });

  it("answers 400 invalid_body naming the parameter when postcode is missing or empty", async () => {
    const missing = await rig.get("/v1/weather");
    expect(missing.status).toBe(400);
    expect((await errorOf(missing)).error).toMatchObject({
      code: "invalid_body",
      message: 'query parameter "postcode" is required',
    });
    const empty = await rig.get("/v1/weather?postcode=%20");
    expect(empty.status).toBe(400);
    const { error } = await errorOf(empty);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toBe('query parameter "postcode" is required');
    expect(rig.postcodes.paths).toHaveLength(0);
  });

  it("picks the night icon when Open-Meteo says it is dark", async () => {
    const night = await weatherRig({}, { isDay: 0, now: "2024-10-24T23:45" });
    try {
      const body = (await (await night.get("/v1/weather?postcode=EH11YZ")).json()) as Weather;
      expect(body.current.is_day).toBe(false);
      expect(body.current.weather.icon).toBe("partly-cloudy-night");
      expect(body.current.observed_at).toBe("2024-10-24T23:45:00+01:00");
      expect(body.location).toMatchObject({ postcode: "EH1 1YZ", region: null, country: "Scotland" });
    } finally {
      await night.close();
    }
  });

  it("is documented in /v1/openapi.json with examples", async () => {
    const doc = (await (await rig.get("/v1/openapi.json")).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, unknown> } }>;
    };
    for (const path of ["/v1/weather", "/v1/postcode"]) {
      const op = doc.paths[path]?.get;
      expect(op?.parameters.map((p) => p.name)).toContain("postcode");
      expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "404", "502"]));
      expect(JSON.stringify(op?.responses["200"])).toContain('"example"');
      expect(JSON.stringify(op?.responses["404"])).toContain("invalid_format");
    }
    expect(JSON.stringify(doc.paths["/v1/weather"]?.get.responses["200"])).toContain("Weather data by Open-Meteo.com");
  });
});
