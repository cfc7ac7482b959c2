import { z } from "@hono/zod-openapi";
import { SourceSchema } from "../postcode/index.js";

const n = z.number().nullable();
const isoTime = z.string().openapi({ description: "ISO 8601 with offset.", example: "2024-10-24T14:15:00+01:00" });

const Condition = z
  .object({
    code: n.openapi({ description: "WMO weather interpretation code (WMO 4677).", example: 3 }),
    text: z.string().openapi({ example: "Overcast" }),
    icon: z.string().openapi({
      description:
        "Icon key: clear, mostly-clear, partly-cloudy, showers and snow-showers come as `-day`/`-night`; " +
        "others (overcast, fog, drizzle, rain, heavy-rain, snow, thunderstorm, …) have one key; `unknown` otherwise.",
      example: "overcast",
    }),
  })
  .openapi("WeatherCondition");

export const WeatherResponse = z
  .object({
    location: z.object({
      postcode: z.string(),
      outcode: z.string(),
      lat: z.number(),
      lon: z.number(),
      latitude: z.number().openapi({ deprecated: true, description: "Old name of `lat`." }),
      longitude: z.number().openapi({ deprecated: true, description: "Old name of `lon`." }),
      district: z.string().nullable(),
      region: z.string().nullable(),
      country: z.string().nullable(),
    }),
    forecast_point: z
      .object({
        lat: z.number(),
        lon: z.number(),
        latitude: z.number().openapi({ deprecated: true, description: "Old name of `lat`." }),
        longitude: z.number().openapi({ deprecated: true, description: "Old name of `lon`." }),
        elevation: n,
      })
      .openapi({ description: "The model grid cell the forecast is for (elevation in metres)." }),
    tz: z.string().openapi({ example: "Europe/London", description: "IANA time zone of the forecast's times." }),
    timezone: z.string().openapi({ example: "Europe/London", deprecated: true, description: "Old name of `tz`." }),
    current: z.object({
      observed_at: isoTime,
      weather: Condition,
      is_day: z.boolean().nullable(),
      temperature: n,
      feels_like: n,
      humidity: n,
      precipitation: n,
      wind: z.object({ speed: n, direction: n.openapi({ description: "Degrees, from which it blows." }), gusts: n }),
    }),
    daily: z.array(
      z.object({
        date: z.string().openapi({ example: "2024-10-24" }),
        weather: Condition,
        temperature: z.object({ min: n, max: n }),
        feels_like: z.object({ min: n, max: n }),
        precipitation: z.object({ sum: n, probability: n }),
        wind_speed_max: n,
        sunrise: isoTime.nullable(),
        sunset: isoTime.nullable(),
      }),
    ),
    units: z.object({
      temperature: z.string(),
      feels_like: z.string(),
      humidity: z.string(),
      precipitation: z.string(),
      precipitation_probability: z.string(),
      wind_speed: z.string(),
      wind_direction: z.string(),
      elevation: z.string(),
    }),
    sources: z.array(SourceSchema),
  })
  .openapi("Weather");

export type WeatherView = z.infer<typeof WeatherResponse>;
