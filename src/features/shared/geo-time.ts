import { z } from "@hono/zod-openapi";
import { DateTime, Settings } from "luxon";
import tzlookup from "tz-lookup";
import { TZDB_LINK_NAMES } from "./zone-links.js";
import { CachedIanaZone, type LocalFields, localTs, type TimeZones } from "./zones.js";

export { LocalToday, TimeZones } from "./zones.js";

/**
 * Query-parameter pieces shared by the location/time lookups (moon, sun, and whoever needs
 * them): latitude, longitude, IANA zone, a calendar date or instant, and the local civil day.
 */

/**
 * A number as JSON writes it (so as the document's `type: number` / `integer` reads a query value),
 * exponent form included (`1e-7`, as JavaScript writes small numbers); no sign `+`, no leading
 * zeros, no bare `.5` or `5.`, no spaces.
 */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A query string read as a number when `shape` matches it (the rest stays a string and fails the
 * number schema with its message). The schema is the document's: type, range and example come
 * from it (@hono/zod-openapi documents a preprocess by its output schema).
 */
const numberFrom = <T extends z.ZodType>(shape: RegExp, schema: T) =>
  z.preprocess((v) => (typeof v === "string" && shape.test(v) ? Number(v) : v), schema);

const degrees = (min: number, max: number, example: number) =>
  numberFrom(
    JSON_NUMBER,
    z
      .number({ error: "must be a decimal number of degrees" })
      .min(min, `must be between ${min} and ${max}`)
      .max(max, `must be between ${min} and ${max}`),
  ).openapi({ example, description: `Decimal degrees, ${min} to ${max} (exponent form such as 1e-7 accepted).` });

const TZ_INVALID = "must be an IANA time zone such as Europe/London";
const DATE_INVALID = "must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999";

/** OpenAPI 400 examples for `date` and `tz`, worded as the validators below word them. */
export const dateTzErrorExamples = {
  date: { code: "invalid_body", message: `query parameter "date" is invalid: ${DATE_INVALID}` },
  tz: { code: "invalid_body", message: `query parameter "tz" is invalid: ${TZ_INVALID}` },
} as const;

export const latitudeParam = degrees(-90, 90, 51.4769);
export const longitudeParam = degrees(-180, 180, -0.0005);

/** A whole number within [min, max], from a query string. */
export const intParam = (min: number, max: number) =>
  numberFrom(
    JSON_NUMBER,
    z
      .number({ error: "must be a whole number" })
      .int("must be a whole number")
      .min(min, `must be between ${min} and ${max}`)
      .max(max, `must be between ${min} and ${max}`),
  );

/** The canonical name of an IANA zone (`europe/london` → `Europe/London`), or null. */
export function canonicalZone(name: string): string | null {
  // Intl also accepts offsets such as "+01:00" on newer engines: only IANA names here.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * The zone names the document lists: the engine's own list and tzdb's other names (links, renamed
 * zones) that the engine accepts, so every name a generated client may send is one the server
 * takes (any case is accepted too).
 */
const ZONE_NAMES = [...new Set(["UTC", ...Intl.supportedValuesOf("timeZone"), ...TZDB_LINK_NAMES])]
  .filter((name) => canonicalZone(name) !== null)
  .sort();

export const timeZoneParam = z
  .string()
  .max(64, TZ_INVALID)
  .refine((v) => canonicalZone(v) !== null, TZ_INVALID)
  .openapi({ example: "Europe/London", enum: ZONE_NAMES, description: "IANA time zone of the local civil day." });

/** Moon's `lat` and `lon` come together: an OpenAPI extension on the operation says so to tools. */
export const LAT_LON_TOGETHER = { "x-dependent-required": { lat: ["lon"], lon: ["lat"] } };

/**
 * `YYYY-MM-DD` or an ISO 8601 date-time (offset optional), years 1000 to 2999 as written: one
 * pattern for the validator and the document.
 */
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// A real day of years 1000–2999 (months of 30/31 days, 29 February in leap years only), then a
// time of day (00:00 to 23:59:59.999999999) and an offset up to ±23:59.
const DAY =
  "[12]\\d{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))" +
  "|[12]\\d(?:0[48]|[2468][048]|[13579][26])-02-29|(?:1[26]|2[048])00-02-29";
const TIME = "[Tt](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:[Zz]|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)?";
const DATE_OR_DATE_TIME = new RegExp(`^(?:${DAY})(?:${TIME})?$`);

/**
 * True for `YYYY-MM-DD` or an ISO 8601 date-time (offset optional) that names a real day or instant.
 * The pattern alone decides a date (DAY is the calendar); luxon also reads a date-time.
 */
export function isDateOrDateTime(value: string): boolean {
  return DATE_OR_DATE_TIME.test(value) && (DATE_ONLY.test(value) || DateTime.fromISO(value, { zone: "UTC" }).isValid);
}

/**
 * A date-time whose offset's `+` arrived as a space (`…T12:00 05:00`: in a query string `+` is a
 * space), told how to send it; anything else that is not a date, DATE_INVALID.
 */
function dateInvalid(input: unknown): string {
  const plus = typeof input === "string" ? / (\d{2}:?\d{2})$/.exec(input) : null;
  if (!plus || !isDateOrDateTime(`${(input as string).slice(0, plus.index)}+${plus[1]}`)) return DATE_INVALID;
  return `${DATE_INVALID}; a + in a query string is a space: send the offset as %2B${plus[1]} (or Z)`;
}

export const dateParam = z
  .string()
  .max(35, DATE_INVALID)
  .refine(isDateOrDateTime, { error: (issue) => dateInvalid(issue.input) })
  .openapi({
    example: "2024-01-25",
    pattern: DATE_OR_DATE_TIME.source,
    description:
      "A calendar date `YYYY-MM-DD` (the local civil day in `tz`) or an ISO 8601 date-time " +
      "`YYYY-MM-DDThh:mm[:ss[.fff]][Z|±hh:mm]`, years 1000 to 2999; a date-time without an offset is read in `tz`. " +
      "Default: now.",
  });

/** Adds the "lat and lon come together" rule to a query object holding both. */
export function requireBothOrNeither(q: { lat?: number; lon?: number }, ctx: z.RefinementCtx): void {
  if ((q.lat === undefined) !== (q.lon === undefined)) {
    const missing = q.lat === undefined ? "lat" : "lon";
    ctx.addIssue({ code: "custom", path: [missing], message: "lat and lon must be given together" });
  }
}

/** The zone to use: the one asked for, else the zone at the coordinates, else UTC. */
export function resolveZone(tz: string | undefined, lat?: number, lon?: number): string {
  if (tz) return canonicalZone(tz) ?? "UTC";
  if (lat !== undefined && lon !== undefined) return tzlookup(lat, lon);
  return "UTC";
}

export interface LocalDay {
  /** The calendar date, YYYY-MM-DD, in `zone`. */
  date: string;
  zone: string;
  start: Date;
  /** Exclusive; 23 or 25 hours after `start` on a daylight-saving change. */
  end: Date;
}

export interface When {
  /** The instant asked about: the given date-time, now, or local noon of a date-only value. */
  at: Date;
  /** Whether `date` was a bare calendar date. */
  dateOnly: boolean;
  day: LocalDay;
}

/**
 * Reads the `date` parameter in `zone`; see `dateParam` for the rules. With `zones`, the zone's
 * offsets come from its cache and a calendar date's noon and bounds are worked out once (same
 * results).
 */
export function resolveWhen(date: string | undefined, zone: string, now: Date, zones?: TimeZones): When {
  const dateOnly = date !== undefined && DATE_ONLY.test(date);
  if (!dateOnly || !zones) return luxonWhen(date, zone, now, zones);
  const key = `${zone} ${date}`;
  let day = zones.days.get(key);
  if (!day) {
    const z = zones.get(zone);
    if (z instanceof CachedIanaZone) day = calendarDay(date, z);
    else {
      const w = luxonWhen(date, zone, now, zones);
      day = { at: w.at.getTime(), date: w.day.date, start: w.day.start.getTime(), end: w.day.end.getTime() };
    }
    zones.days.set(key, day);
  }
  return {
    at: new Date(day.at),
    dateOnly,
    day: { date: day.date, zone, start: new Date(day.start), end: new Date(day.end) },
  };
}

/** Local calendar fields of an instant at offset `o` (minutes): luxon's tsToObj. */
function localFields(ts: number, o: number): LocalFields {
  const d = new Date(ts + o * 60_000);
  return [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  ];
}

/** The instant of a local time given an offset guess: luxon's fixOffset, to [ts, offset]. */
function fixOffset(local: number, o: number, zone: CachedIanaZone): [number, number] {
  let guess = local - o * 60_000;
  const o2 = zone.offset(guess);
  if (o === o2) return [guess, o];
  guess -= (o2 - o) * 60_000;
  const o3 = zone.offset(guess);
  if (o2 === o3) return [guess, o2];
  return [local - Math.min(o2, o3) * 60_000, Math.max(o2, o3)];
}

/**
 * A calendar date's noon and bounds, the steps luxonWhen takes through luxon
 * (`fromISO(date).set({ hour: 12 })`, `startOf("day")`, `plus({ days: 1 }).startOf("day")`)
 * taken here on plain numbers: the same offset guesses, so the same instants on days with a
 * transition (a skipped midnight included). luxon's first guess is the zone's offset now.
 */
function calendarDay(date: string, zone: CachedIanaZone): { at: number; date: string; start: number; end: number } {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const midnight = ([year, month, day]: LocalFields): number => localTs([year, month, day, 0, 0, 0, 0]);
  // fromISO: local midnight of the date, from the offset at luxon's now.
  let [ts, o] = fixOffset(localTs([y, m, d, 0, 0, 0, 0]), zone.offset(Settings.now()), zone);
  // set({ hour: 12 }): the other fields as they came out.
  const c = localFields(ts, o);
  [ts, o] = fixOffset(localTs([c[0], c[1], c[2], 12, c[4], c[5], c[6]]), o, zone);
  const at = ts;
  // startOf("day").
  const [start, so] = fixOffset(midnight(localFields(ts, o)), o, zone);
  const s = localFields(start, so);
  // plus({ days: 1 }) (the time of day kept), then startOf("day").
  const [next, no] = fixOffset(localTs([s[0], s[1], s[2] + 1, s[3], s[4], s[5], s[6]]), so, zone);
  const [end] = fixOffset(midnight(localFields(next, no)), no, zone);
  return { at, date: `${pad4(s[0])}-${pad2(s[1])}-${pad2(s[2])}`, start, end };
}

function luxonWhen(date: string | undefined, zone: string, now: Date, zones?: TimeZones): When {
  const dateOnly = date !== undefined && DATE_ONLY.test(date);
  const z = zones?.get(zone) ?? zone;
  const at =
    date === undefined
      ? DateTime.fromJSDate(now, { zone: z })
      : dateOnly
        ? DateTime.fromISO(date, { zone: z }).set({ hour: 12 })
        : DateTime.fromISO(date, { zone: z });
  const start = at.startOf("day");
  return {
    at: at.toJSDate(),
    dateOnly,
    day: {
      date: start.toISODate() ?? "",
      zone,
      start: start.toJSDate(),
      end: start.plus({ days: 1 }).startOf("day").toJSDate(),
    },
  };
}

/** 0000-01-01 and 10000-01-01 UTC: the years luxon and Date.toISOString both write as 4 digits. */
const YEAR_0_MS = -62_167_219_200_000;
const YEAR_10000_MS = 253_402_300_800_000;
const DAY_MS = 86_400_000;
const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));
const pad4 = (n: number) => (n < 1000 ? `0${pad3(n)}` : String(n));

/**
 * `new Date(ms).toISOString()` without its `Z`, and without the milliseconds when they are 0, for
 * ms in [YEAR_0_MS, YEAR_10000_MS): the civil date by arithmetic (days → proleptic Gregorian
 * year, month, day), where toISOString formats through printf (~7,000 instructions a call, a
 * tenth of an uncached moon answer's).
 */
export function isoLocal(ms: number): string {
  const t = Math.trunc(ms); // as new Date(ms) keeps it
  const days = Math.floor(t / DAY_MS);
  const inDay = t - days * DAY_MS;
  // Days since 0000-03-01 in 400-year eras (H. Hinnant's civil_from_days).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const sec = Math.floor(inDay / 1000);
  const milli = inDay - sec * 1000;
  const hms = `${pad2(Math.floor(sec / 3600))}:${pad2(Math.floor(sec / 60) % 60)}:${pad2(sec % 60)}`;
  const iso = `${pad4(year)}-${pad2(month)}-${pad2(day)}T${hms}`;
  return milli === 0 ? iso : `${iso}.${pad3(milli)}`;
}

/**
 * ISO 8601 with the zone's offset, to the second: `2024-01-25T17:54:12+00:00`. With `zones`,
 * an IANA zone's string is built directly from its cached offset, exactly as luxon's toISO
 * writes it (local time = instant + offset, offset truncated to minutes); else luxon.
 */
export function isoInZone(instant: Date, zone: string, zones?: TimeZones): string {
  const ms = Math.round(instant.getTime() / 1000) * 1000;
  const z = zones?.get(zone);
  if (z instanceof CachedIanaZone) {
    const offset = z.offset(ms);
    const local = ms + offset * 60 * 1000;
    if (local >= YEAR_0_MS && local < YEAR_10000_MS) {
      const sign = offset < 0 ? "-" : "+";
      const abs = Math.abs(offset);
      return `${isoLocal(local)}${sign}${pad2(Math.trunc(abs / 60))}:${pad2(Math.trunc(abs % 60))}`;
    }
  }
  return DateTime.fromMillis(ms, { zone: z ?? zone }).toISO({ suppressMilliseconds: true }) ?? "";
}

/** Rounds to `digits` decimals (numbers stay numbers). */
export const round = (value: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};
