import { Body, Observer, SearchAltitude, SearchHourAngle, SearchRiseSet } from "astronomy-engine";
import { isoInZone, type LocalDay, round, type TimeZones } from "../shared/geo-time.js";
import { crossings } from "../shared/rise-set.js";

const DAY_MS = 86_400_000;
/** Farther than the longest polar night or day anywhere on Earth (about 6 months at a pole). */
const POLAR_SEARCH_DAYS = 200;

export interface Twilight {
  /** Morning: the Sun's centre rises through the twilight's depression angle. */
  begin: string | null;
  /** Evening: the Sun's centre sinks through it. */
  end: string | null;
}

export interface SunReport {
  sunrise: string | null;
  sunset: string | null;
  /** When the day has no sunrise (or sunset): the next one after it; otherwise null. */
  next_sunrise: string | null;
  next_sunset: string | null;
  solar_noon: string | null;
  solar_noon_altitude_deg: number | null;
  day_length_seconds: number;
  /** "day": the Sun never sets this day; "night": it never rises; null: it does both or one. */
  polar: "day" | "night" | null;
  twilight: { civil: Twilight; nautical: Twilight; astronomical: Twilight };
}

function twilight(observer: Observer, day: LocalDay, depression: number, zones?: TimeZones): Twilight {
  const span = (day.end.getTime() - day.start.getTime()) / DAY_MS;
  const begin = SearchAltitude(Body.Sun, observer, +1, day.start, span, -depression)?.date;
  const end = SearchAltitude(Body.Sun, observer, -1, day.start, span, -depression)?.date;
  return {
    begin: begin && begin < day.end ? isoInZone(begin, day.zone, zones) : null,
    end: end && end < day.end ? isoInZone(end, day.zone, zones) : null,
  };
}

/** Sunrise, sunset, solar noon, twilights and day length within one local civil day. */
export function sunReport(day: LocalDay, lat: number, lon: number, zones?: TimeZones): SunReport {
  const observer = new Observer(lat, lon, 0);
  const iso = (d: Date | undefined) => (d ? isoInZone(d, day.zone, zones) : null);
  const rises = crossings(Body.Sun, observer, +1, day.start, day.end);
  const sets = crossings(Body.Sun, observer, -1, day.start, day.end);
  const events = [...rises.map((t) => ({ t, up: true })), ...sets.map((t) => ({ t, up: false }))].sort(
    (a, b) => a.t.getTime() - b.t.getTime(),
  );

  let nextRise: Date | undefined;
  let nextSet: Date | undefined;
  if (rises.length === 0) nextRise = SearchRiseSet(Body.Sun, observer, +1, day.end, POLAR_SEARCH_DAYS)?.date;
  if (sets.length === 0) nextSet = SearchRiseSet(Body.Sun, observer, -1, day.end, POLAR_SEARCH_DAYS)?.date;

  // Whether the Sun is up when the day starts: the opposite of the first crossing; with no
  // crossing at all, up exactly when the next crossing after the day is a set.
  let upAtStart: boolean;
  if (events.length > 0) upAtStart = !(events[0] as { up: boolean }).up;
  else upAtStart = (nextSet?.getTime() ?? Number.POSITIVE_INFINITY) < (nextRise?.getTime() ?? Number.POSITIVE_INFINITY);

  let up = upAtStart;
  let since = day.start.getTime();
  let daylightMs = 0;
  for (const e of events) {
    if (up) daylightMs += e.t.getTime() - since;
    up = e.up;
    since = e.t.getTime();
  }
  if (up) daylightMs += day.end.getTime() - since;

  const noon = SearchHourAngle(Body.Sun, observer, 0, day.start, +1);
  const noonInDay = noon.time.date < day.end;
  return {
    sunrise: iso(rises[0]),
    sunset: iso(sets[0]),
    next_sunrise: iso(nextRise),
    next_sunset: iso(nextSet),
    solar_noon: noonInDay ? iso(noon.time.date) : null,
    solar_noon_altitude_deg: noonInDay ? round(noon.hor.altitude, 2) : null,
    day_length_seconds: Math.round(daylightMs / 1000),
    polar: events.length > 0 ? null : upAtStart ? "day" : "night",
    twilight: {
      civil: twilight(observer, day, 6, zones),
      nautical: twilight(observer, day, 12, zones),
      astronomical: twilight(observer, day, 18, zones),
    },
  };
}
