import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../../app-deps.js";
import { keptAnswers, keptJson, taggedBytes } from "../../http/http-cache.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import { dateTzErrorExamples, LAT_LON_TOGETHER, resolveWhen, resolveZone, TimeZones } from "../shared/geo-time.js";
import { errorResponse } from "../shared/responses.js";
import { MoonCalculator, PHASES } from "./moon.js";
import { MoonQuery, MoonResponse, type MoonResponseBody } from "./schema.js";

export const MOON_UNITS = {
  illumination: "fraction 0–1 and percent 0–100",
  elongation_deg: "degrees",
  phase_longitude_deg: "degrees",
  age_days: "days",
  distance_km: "kilometres",
  times: "ISO 8601 with the offset of tz",
};

const EXAMPLE: MoonResponseBody = {
  at: "2024-01-25T12:00:00+00:00",
  date: "2024-01-25",
  tz: "Europe/London",
  location: { lat: 51.5, lon: -0.1 },
  phase: { key: "full_moon", name: "Full Moon", emoji: "🌕" },
  illumination: { fraction: 0.9976, percent: 99.8 },
  elongation_deg: 174.41,
  phase_longitude_deg: 177.25,
  age_days: 14,
  distance_km: 400394,
  previous_phase: { key: "first_quarter", name: "First Quarter", time: "2024-01-18T03:52:38+00:00" },
  next_phase: { key: "full_moon", name: "Full Moon", time: "2024-01-25T17:54:05+00:00" },
  upcoming_phases: [
    { key: "full_moon", name: "Full Moon", time: "2024-01-25T17:54:05+00:00" },
    { key: "last_quarter", name: "Last Quarter", time: "2024-02-02T23:18:03+00:00" },
  ],
  events: {
    moonrise: "2024-01-25T15:59:33+00:00",
    moonset: "2024-01-25T08:20:22+00:00",
    transit: null,
    moonrises: ["2024-01-25T15:59:33+00:00"],
    moonsets: ["2024-01-25T08:20:22+00:00"],
    transits: [],
    next_moonrise: null,
    next_moonset: null,
    next_transit: "2024-01-26T00:30:34+00:00",
  },
  units: MOON_UNITS,
};

const route = createRoute({
  method: "get",
  path: "/v1/moon",
  ...LAT_LON_TOGETHER,
  tags: ["Lookups"],
  summary: "Moon phase, illumination, principal phases and (with lat/lon) rise, set and transit",
  description:
    "Computed with astronomy-engine (principal-phase instants agree with USNO to about a minute). " +
    "The phase of a day on which a principal phase occurs (in `tz`) is that phase, as calendars show it; " +
    "otherwise the intermediate phase at the instant. With `lat`/`lon`, moonrise, moonset and transit inside " +
    "the local civil day of `tz`: `moonrises`, `moonsets` and `transits` list every one (a high-latitude day " +
    "can have two rises or two sets); `moonrise`, `moonset` and `transit` are the first, `null` when the day " +
    "has none, and then `next_*` gives the next one.",
  request: { query: MoonQuery },
  responses: {
    200: {
      description: "The Moon at the instant (and in the local day).",
      content: { "application/json": { schema: MoonResponse, example: EXAMPLE } },
    },
    400: errorResponse("A query parameter is invalid; the message names it.", {
      lat: { code: "invalid_body", message: 'query parameter "lat" is invalid: must be between -90 and 90' },
      lon_missing: { code: "invalid_body", message: 'query parameter "lon" is required' },
      ...dateTzErrorExamples,
      phases: { code: "invalid_body", message: 'query parameter "phases" is invalid: must be between 1 and 12' },
    }),
  },
});

/** The constant parts of an answer holding characters beyond ASCII, as UTF-8, made once. */
const utf8 = (text: string) => Buffer.from(text, "utf8");
const PHASE_BYTES = new Map<string, Buffer>(
  Object.entries(PHASES).map(([key, phase]) => [key, utf8(`,"phase":${JSON.stringify({ key, ...phase })},`)]),
);
const UNITS_BYTES = utf8(`,"units":${JSON.stringify(MOON_UNITS)}}`);

/**
 * `JSON.stringify(body)`'s UTF-8 bytes, with the phase (its emoji) and the units (their dashes)
 * spliced in as bytes made once: the rest is ASCII, which V8 writes and encodes in one-byte
 * strings, where one emoji made the whole text two-byte (slower to build, ~3× slower to encode).
 */
export function moonJson(body: MoonResponseBody): Uint8Array<ArrayBuffer> {
  const { at, date, tz, location, phase, units: _units, ...rest } = body;
  const head = JSON.stringify({ at, date, tz, location });
  const tail = JSON.stringify(rest);
  const phaseBytes = PHASE_BYTES.get(phase.key);
  const known = PHASES[phase.key];
  // Anything else than the constants (no route sends it) is written whole.
  if (phaseBytes === undefined || _units !== MOON_UNITS || phase.name !== known.name || phase.emoji !== known.emoji)
    return utf8(JSON.stringify(body));
  return Buffer.concat([utf8(head.slice(0, -1)), phaseBytes, utf8(tail.slice(1, -1)), UNITS_BYTES]);
}

/** `GET /v1/moon?date=&lat=&lon=&tz=&phases=`. */
export function registerMoon(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "config" | "now">): void {
  const zones = new TimeZones();
  const moon = new MoonCalculator(zones);
  // An answer pinned by its date depends on the query alone: its bytes and ETag, made once per
  // query (a keyed GET comes here every time); none with the answer cache off.
  const pinned = keptAnswers(deps.config);
  openapiRoute(app, route, (c) => {
    const query = c.req.valid("query");
    const zone = resolveZone(query.tz, query.lat, query.lon);
    const phases = query.phases ?? 4;
    const key = query.date === undefined ? undefined : `${query.date} ${zone} ${query.lat} ${query.lon} ${phases}`;
    const kept = key === undefined ? undefined : pinned?.get(key);
    if (kept) return keptJson<MoonResponseBody>(c, kept);
    const when = resolveWhen(query.date, zone, deps.now(), zones);
    const observer =
      query.lat !== undefined && query.lon !== undefined ? { lat: query.lat, lon: query.lon } : undefined;
    const { at, ...rest } = moon.report({ at: when.at, day: when.day, phases, observer });
    const answer = taggedBytes(
      moonJson({
        at,
        date: when.day.date,
        tz: zone,
        location: observer ?? null,
        ...rest,
        units: MOON_UNITS,
      }),
    );
    if (key !== undefined) pinned?.set(key, answer);
    return keptJson<MoonResponseBody>(c, answer);
  });
}
