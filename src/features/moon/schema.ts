import { z } from "@hono/zod-openapi";
import {
  dateParam,
  intParam,
  latitudeParam,
  longitudeParam,
  requireBothOrNeither,
  timeZoneParam,
} from "../shared/geo-time.js";

const q = (name: string) => ({ param: { name, in: "query" as const } });

export const MoonQuery = z
  .object({
    date: dateParam.optional().openapi(q("date")),
    lat: latitudeParam
      .optional()
      .openapi({ ...q("lat"), description: "Observer latitude; send it with `lon` (one without the other is a 400)." }),
    lon: longitudeParam.optional().openapi({
      ...q("lon"),
      description: "Observer longitude; send it with `lat` (one without the other is a 400).",
    }),
    tz: timeZoneParam
      .optional()
      .openapi({ ...q("tz"), description: "IANA zone. Default: the zone at lat/lon, else UTC." }),
    phases: intParam(1, 12)
      .optional()
      .openapi({
        ...q("phases"),
        example: 4,
        description: "How many upcoming principal phases to list (1–12, default 4).",
      }),
  })
  .superRefine(requireBothOrNeither);

const instant = (example: string) => z.string().openapi({ example, description: "ISO 8601 with offset." });
const nullableInstant = (example: string | null, description: string) =>
  z.string().nullable().openapi({ example, description });

const instants = (example: string[], description: string) =>
  z.array(z.string()).openapi({ example, description: `${description} ISO 8601 with offset.` });

const PhaseInstant = z
  .object({
    key: z.enum(["new_moon", "first_quarter", "full_moon", "last_quarter"]),
    name: z.string().openapi({ example: "Full Moon" }),
    time: instant("2024-01-25T17:54:00+00:00"),
  })
  .openapi("MoonPhaseInstant");

export const MoonResponse = z
  .object({
    at: instant("2024-01-25T12:00:00+00:00").openapi({
      description: "The instant described: the given date-time, now, or local noon of a date.",
    }),
    date: z.string().openapi({ example: "2024-01-25", description: "The local civil day (YYYY-MM-DD) in `tz`." }),
    tz: z.string().openapi({ example: "Europe/London" }),
    location: z.object({ lat: z.number(), lon: z.number() }).nullable(),
    phase: z.object({
      key: z.enum([
        "new_moon",
        "waxing_crescent",
        "first_quarter",
        "waxing_gibbous",
        "full_moon",
        "waning_gibbous",
        "last_quarter",
        "waning_crescent",
      ]),
      name: z.string(),
      emoji: z.string(),
    }),
    illumination: z.object({
      fraction: z.number().openapi({ description: "Illuminated fraction of the disc, 0 to 1." }),
      percent: z.number().openapi({ description: "The same, 0 to 100." }),
    }),
    elongation_deg: z.number().openapi({ description: "Angular distance Moon–Sun as seen from Earth, degrees." }),
    phase_longitude_deg: z.number().openapi({
      description: "Moon's ecliptic longitude minus the Sun's, 0–360 (0 new, 90 first quarter, 180 full, 270 last).",
    }),
    age_days: z.number().openapi({ description: "Days since the previous new moon." }),
    distance_km: z.number().openapi({ description: "Earth–Moon centre distance, kilometres." }),
    previous_phase: PhaseInstant,
    next_phase: PhaseInstant,
    upcoming_phases: z.array(PhaseInstant),
    events: z
      .object({
        moonrise: nullableInstant(
          "2024-01-25T15:59:33+00:00",
          "The first moonrise of the local day (see `moonrises`); null when there is none.",
        ),
        moonset: nullableInstant(
          "2024-01-25T08:20:22+00:00",
          "The first moonset of the local day (see `moonsets`); null when there is none.",
        ),
        transit: nullableInstant(null, "The first upper culmination of the local day; null when there is none."),
        moonrises: instants(
          ["2024-01-25T15:59:33+00:00"],
          "Every moonrise of the local day, in order: at high latitudes a day can have two (Tromsø, several days a year).",
        ),
        moonsets: instants(["2024-01-25T08:20:22+00:00"], "Every moonset of the local day, in order."),
        transits: instants([], "Every upper culmination of the local day, in order."),
        next_moonrise: nullableInstant(null, "The next moonrise after the day, only when the day has none."),
        next_moonset: nullableInstant(null, "The next moonset after the day, only when the day has none."),
        next_transit: nullableInstant("2024-01-26T00:30:34+00:00", "The next transit, only when the day has none."),
      })
      .nullable()
      .openapi({ description: "Only with lat/lon; null otherwise." }),
    units: z.record(z.string(), z.string()),
  })
  .openapi("Moon");

export type MoonResponseBody = z.infer<typeof MoonResponse>;
