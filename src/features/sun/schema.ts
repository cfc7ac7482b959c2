import { z } from "@hono/zod-openapi";
import { dateParam, latitudeParam, longitudeParam, timeZoneParam } from "../shared/geo-time.js";

const q = (name: string) => ({ param: { name, in: "query" as const } });

export const SunQuery = z.object({
  date: dateParam.optional().openapi({
    ...q("date"),
    description: "The local civil day (YYYY-MM-DD, or any ISO 8601 instant in it), years 1000 to 2999. Default: today.",
  }),
  lat: latitudeParam.openapi({ ...q("lat"), description: "Observer latitude (required)." }),
  lon: longitudeParam.openapi({ ...q("lon"), description: "Observer longitude (required)." }),
  tz: timeZoneParam
    .optional()
    .openapi({ ...q("tz"), description: "IANA zone of the day. Default: the zone at lat/lon." }),
});

const time = (example: string | null, description = "ISO 8601 with offset; null when it does not happen this day.") =>
  z.string().nullable().openapi({ example, description });

const TwilightSchema = z
  .object({ begin: time("2025-06-21T03:55:25+01:00"), end: time("2025-06-21T22:09:17+01:00") })
  .openapi("Twilight");

export const SunResponse = z
  .object({
    date: z.string().openapi({ example: "2025-06-21" }),
    tz: z.string().openapi({ example: "Europe/London" }),
    location: z.object({ lat: z.number(), lon: z.number() }),
    sunrise: time("2025-06-21T04:43:12+01:00"),
    sunset: time("2025-06-21T21:21:30+01:00"),
    next_sunrise: time(null, "Only when the day has no sunrise: the next one (polar night, midnight sun)."),
    next_sunset: time(null, "Only when the day has no sunset: the next one."),
    solar_noon: time("2025-06-21T13:02:21+01:00", "The Sun's upper transit."),
    solar_noon_altitude_deg: z.number().nullable().openapi({ example: 61.95 }),
    day_length_seconds: z.number().int().openapi({
      example: 59898,
      description: "Seconds the Sun is above the horizon within the local day (0 in polar night).",
    }),
    polar: z.enum(["day", "night"]).nullable().openapi({
      example: null,
      description: '"day": the Sun never sets this day; "night": it never rises; null otherwise.',
    }),
    twilight: z.object({ civil: TwilightSchema, nautical: TwilightSchema, astronomical: TwilightSchema }),
    units: z.record(z.string(), z.string()),
  })
  .openapi("Sun");

export type SunResponseBody = z.infer<typeof SunResponse>;
