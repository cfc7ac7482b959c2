import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { TypedResponse } from "hono";
import type { AppDeps } from "../../app-deps.js";
import { reuseUntil } from "../../http/answer-cache.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import {
  FORECAST_FAILED,
  type PlaceLookup,
  PostcodeQuery,
  placeFailureError,
  postcodeErrorResponses,
  RESOLVER_FAILED,
} from "../postcode/index.js";
import { WEATHER_EXAMPLE } from "./example.js";
import { ForecastLookup } from "./forecast.js";
import { ReportBodies } from "./report.js";
import { WeatherResponse, type WeatherView } from "./schema.js";

/**
 * How long the hot lane may send a weather answer again. The forecast under it is cached for 15
 * minutes (and may be refreshed by another instance): this adds at most 10 s to its age.
 */
export const WEATHER_REUSE_MS = 10_000;

const route = createRoute({
  method: "get",
  path: "/v1/weather",
  tags: ["Lookups"],
  summary: "Weather by UK postcode",
  description:
    "Resolves the postcode (postcodes.io, cached 7 days) and returns current conditions and a 7-day daily " +
    "forecast from Open-Meteo (cached 15 minutes per ~1 km cell), in Europe/London time. Show the `sources` " +
    "attributions with the data: the licences require it. A postcode without coordinates answers 404 " +
    "with reason `no_location`.",
  request: { query: PostcodeQuery },
  responses: {
    200: {
      description: "Location, current conditions and the daily forecast.",
      headers: {
        "Cache-Control": {
          description: "`no-cache`: the answer is about now; a cache must ask again.",
          required: true,
          schema: { type: "string", maxLength: 64, example: "no-cache" },
        },
      },
      content: { "application/json": { schema: WeatherResponse, example: WEATHER_EXAMPLE } },
    },
    ...postcodeErrorResponses(
      { resolver: RESOLVER_FAILED, forecast: FORECAST_FAILED },
      { no_location: { code: "not_found", message: "postcode not found", reason: "no_location" } },
    ),
  },
});

/** `GET /v1/weather?postcode=`: place, current conditions and a 7-day forecast. */
export function registerWeather(
  app: OpenAPIHono<AppEnv>,
  deps: Pick<AppDeps, "cache" | "forecaster" | "now">,
  places: PlaceLookup,
): void {
  const forecasts = new ForecastLookup(deps.forecaster, deps.cache);
  const bodies = new ReportBodies();
  openapiRoute(app, route, async (c) => {
    const found = await places.find(c.req.valid("query").postcode);
    if (!found.ok) throw placeFailureError(found.error);
    const place = found.value;
    const { latitude, longitude } = place;
    if (latitude === null || longitude === null) throw placeFailureError({ kind: "not_found", reason: "no_location" });
    const forecast = await forecasts.at(latitude, longitude);
    if (!forecast.ok) throw new ApiError("upstream_error", FORECAST_FAILED, { cause: forecast.error.cause });
    // The same body and Content-Type as c.json, serialised once per cached forecast and place.
    const now = deps.now();
    const body = bodies.json(place, { latitude, longitude }, forecast.value, now.getUTCFullYear());
    reuseUntil(c, now.getTime() + WEATHER_REUSE_MS);
    return c.body(body, 200, {
      "Content-Type": "application/json",
      "Cache-Control": "no-cache",
    }) as unknown as TypedResponse<WeatherView, 200, "json">;
  });
}
