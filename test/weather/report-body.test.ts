import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/deps.js";
import { ReportBodies, weatherReport } from "../../src/features/weather/report.js";
import type { Forecast } from "../../src/ports/forecaster.js";
import type { Place } from "../../src/ports/postcode-resolver.js";
import { type WeatherRig, weatherRig } from "./setup.js";

/** The cached forecast's serialised report: the same bytes as a fresh c.json, per place and year. */
describe("GET /v1/weather: the report body kept with the cached forecast", () => {
  let rig: WeatherRig;
  let now = new Date("2025-06-01T12:00:00Z");
  beforeAll(async () => {
    rig = await weatherRig();
    (rig.t.deps as { now: AppDeps["now"] }).now = () => now;
  });
  afterAll(() => rig.close());

  it("repeated hits answer the same JSON with the same Content-Type; a new year re-renders the attribution", async () => {
    const first = await rig.get("/v1/weather?postcode=SW1A2AA");
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json");
    const text = await first.text();
    const second = await rig.get("/v1/weather?postcode=sw1a%202aa");
    expect(second.headers.get("content-type")).toBe("application/json");
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await second.text()).toBe(text);
    expect(rig.meteo.paths).toHaveLength(1);
    expect(text).toContain("2025");

    now = new Date("2026-01-01T00:00:01Z");
    const next = await rig.get("/v1/weather?postcode=SW1A2AA");
    const sources = ((await next.json()) as { sources: { attribution: string }[] }).sources;
    expect(sources.map((s) => s.attribution).join(" ")).toContain("2026");
    expect(rig.meteo.paths).toHaveLength(1);
  });

  it("ReportBodies gives JSON.stringify(weatherReport(...)) per forecast, place and year", () => {
    const bodies = new ReportBodies();
    const place = { postcode: "A1 1AA", outcode: "A1", latitude: 1, longitude: 2 } as Place;
    const other = { ...place, postcode: "A1 1AB" } as Place;
    const forecast = {
      latitude: 1,
      longitude: 2,
      elevation: 3,
      timezone: "Europe/London",
      current: { time: "t", weather_code: 0, is_day: true },
      daily: [],
      units: {},
    } as unknown as Forecast;
    const at = { latitude: 1, longitude: 2 };
    for (const [p, year] of [
      [place, 2025],
      [other, 2025],
      [place, 2025],
      [place, 2026],
    ] as const) {
      expect(bodies.json(p, at, forecast, year)).toBe(JSON.stringify(weatherReport({ ...p, ...at }, forecast, year)));
    }
  });
});
