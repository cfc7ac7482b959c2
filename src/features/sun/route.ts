import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../../app-deps.js";
import { taggedJson } from "../../http/http-cache.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import { dateTzErrorExamples, resolveWhen, resolveZone, TimeZones } from "../shared/geo-time.js";
import { errorResponse } from "../shared/responses.js";
import { SunQuery, SunResponse, type SunResponseBody } from "./schema.js";
import { sunReport } from "./sun.js";

const SUN_UNITS = {
  day_length_seconds: "seconds",
  solar_noon_altitude_deg: "degrees",
  times: "ISO 8601 with the offset of tz",
  twilight: "civil 6°, nautical 12°, astronomical 18° below the horizon",
};

const EXAMPLE: SunResponseBody = {
  date: "2025-06-21",
  tz: "Europe/London",
  location: { lat: 51.5, lon: -0.125 },
  sunrise: "2025-06-21T04:43:12+01:00",
  sunset: "2025-06-21T21:21:30+01:00",
  next_sunrise: null,
  next_sunset: null,
  solar_noon: "2025-06-21T13:02:21+01:00",
  solar_noon_altitude_deg: 61.95,
  day_length_seconds: 59898,
  polar: null,
  twilight: {
    civil: { begin: "2025-06-21T03:55:25+01:00", end: "2025-06-21T22:09:17+01:00" },
    nautical: { begin: "2025-06-21T02:40:48+01:00", end: "2025-06-21T23:23:52+01:00" },
    astronomical: { begin: null, end: null },
  },
  units: SUN_UNITS,
};

const route = createRoute({
  method: "get",
  path: "/v1/sun",
  tags: ["Lookups"],
  summary: "Sunrise, sunset, solar noon, twilights and day length",
  description:
    "For the local civil day of `tz` at `lat`/`lon` (astronomy-engine; sunrise and sunset are the upper limb " +
    "with standard refraction). Polar day and night are stated in `polar`, with null times and the next " +
    "sunrise or sunset after the day.",
  request: { query: SunQuery },
  responses: {
    200: {
      description: "The Sun's events in the local day.",
      content: { "application/json": { schema: SunResponse, example: EXAMPLE } },
    },
    400: errorResponse("A query parameter is missing or invalid; the message names it.", {
      lat_missing: { code: "invalid_body", message: 'query parameter "lat" is required' },
      lon: { code: "invalid_body", message: 'query parameter "lon" is invalid: must be between -180 and 180' },
      ...dateTzErrorExamples,
    }),
  },
});

/** `GET /v1/sun?lat=&lon=&date=&tz=`. */
export function registerSun(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "now">): void {
  const zones = new TimeZones();
  openapiRoute(app, route, (c) => {
    const { lat, lon, tz, date } = c.req.valid("query");
    const zone = resolveZone(tz, lat, lon);
    const { day } = resolveWhen(date, zone, deps.now(), zones);
    const body: SunResponseBody = {
      date: day.date,
      tz: zone,
      location: { lat, lon },
      ...sunReport(day, lat, lon, zones),
      units: SUN_UNITS,
    };
    return taggedJson(c, body);
  });
}
