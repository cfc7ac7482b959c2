import {
  AngleBetween,
  type AstroTime,
  Body,
  DEG2RAD,
  GeoVector,
  HelioVector,
  KM_PER_AU,
  MakeTime,
  type MoonQuarter,
  Observer,
  Vector,
} from "astronomy-engine";
import { LRUCache } from "lru-cache";
import { isoInZone, type LocalDay, round, TimeZones } from "../shared/geo-time.js";
import { MoonSky, MoonTrack, riseSets, searchRiseSet, searchTransit, transits } from "./moon-sky.js";
import { nextQuarter, phaseLongitude, searchQuarter } from "./phase.js";

const DAY_MS = 86_400_000;

export const PRINCIPAL_PHASES = ["new_moon", "first_quarter", "full_moon", "last_quarter"] as const;
export type PrincipalPhase = (typeof PRINCIPAL_PHASES)[number];

/** The eight named phases, in order of elongation, with display name and emoji. */
export const PHASES = {
  new_moon: { name: "New Moon", emoji: "🌑" },
  waxing_crescent: { name: "Waxing Crescent", emoji: "🌒" },
  first_quarter: { name: "First Quarter", emoji: "🌓" },
  waxing_gibbous: { name: "Waxing Gibbous", emoji: "🌔" },
  full_moon: { name: "Full Moon", emoji: "🌕" },
  waning_gibbous: { name: "Waning Gibbous", emoji: "🌖" },
  last_quarter: { name: "Last Quarter", emoji: "🌗" },
  waning_crescent: { name: "Waning Crescent", emoji: "🌘" },
} as const;
export type PhaseKey = keyof typeof PHASES;

export interface PhaseInstant {
  key: PrincipalPhase;
  name: string;
  time: string;
}

export interface MoonEvents {
  /** The first of the day's events (kept for existing clients; see the lists below). */
  moonrise: string | null;
  moonset: string | null;
  transit: string | null;
  /** Every event of the local day, in order: at high latitudes a day can have two rises or sets. */
  moonrises: string[];
  moonsets: string[];
  transits: string[];
  /** The first event after the local day, given only when the day has none (else null). */
  next_moonrise: string | null;
  next_moonset: string | null;
  next_transit: string | null;
}

export interface MoonReport {
  at: string;
  phase: { key: PhaseKey; name: string; emoji: string };
  illumination: { fraction: number; percent: number };
  elongation_deg: number;
  phase_longitude_deg: number;
  age_days: number;
  distance_km: number;
  previous_phase: PhaseInstant;
  next_phase: PhaseInstant;
  upcoming_phases: PhaseInstant[];
  events: MoonEvents | null;
}

export interface MoonInput {
  at: Date;
  day: LocalDay;
  /** Number of upcoming principal phases to list. */
  phases: number;
  observer?: { lat: number; lon: number };
}

const phaseInstant = (q: MoonQuarter, zone: string, zones: TimeZones): PhaseInstant => {
  const key = PRINCIPAL_PHASES[q.quarter] as PrincipalPhase;
  return { key, name: PHASES[key].name, time: isoInZone(q.time.date, zone, zones) };
};

interface MoonInstant {
  longitude: number;
  fraction: number;
  elongation: number;
  distance: number;
}

const SYNODIC_DAYS = 29.530588853;
/** A known new moon (2000-01-06 18:14 UT), origin of the lunation count. */
const REFERENCE_NEW_MOON_MS = Date.UTC(2000, 0, 6, 18, 14);

/**
 * Principal-phase instants by lunation, computed once per lunation and kept: every request in
 * the same weeks needs the same few instants, and each search costs about half a millisecond.
 */
class PhaseTable {
  private readonly lunations = new LRUCache<number, MoonQuarter[]>({ max: 256 });

  /** New moon, first quarter, full moon and last quarter of lunation `k`. */
  private lunation(k: number): MoonQuarter[] {
    let quarters = this.lunations.get(k);
    if (!quarters) {
      // The true new moon is within a day of the mean one; 3 days back is after the last quarter.
      let q = searchQuarter(new Date(REFERENCE_NEW_MOON_MS + (k * SYNODIC_DAYS - 3) * DAY_MS));
      while (q.quarter !== 0) q = nextQuarter(q);
      quarters = [q];
      while (quarters.length < 4) quarters.push(nextQuarter(quarters[quarters.length - 1] as MoonQuarter));
      this.lunations.set(k, quarters);
    }
    return quarters;
  }

  /**
   * The last principal phase at or before `at`, the `count` after it, and the last new moon: from
   * the lunations they fall in, each computed when first needed.
   */
  around(at: Date, count: number): { previous: MoonQuarter; upcoming: MoonQuarter[]; lastNew: MoonQuarter } {
    const t = at.getTime();
    const k = Math.floor((t - REFERENCE_NEW_MOON_MS) / (SYNODIC_DAYS * DAY_MS));
    // The true new moon is within a day of the mean one: before it, the last new moon is lunation k − 1's.
    const all = [...this.lunation(k)];
    if ((all[0] as MoonQuarter).time.date.getTime() > t) all.unshift(...this.lunation(k - 1));
    let next = all.findIndex((q) => q.time.date.getTime() > t);
    for (let i = k + 1; next === -1 || next + count > all.length; i++) {
      all.push(...this.lunation(i));
      if (next === -1) next = all.findIndex((q) => q.time.date.getTime() > t);
    }
    const past = all.slice(0, next);
    return {
      previous: past[past.length - 1] as MoonQuarter,
      upcoming: all.slice(next, next + count),
      lastNew: past.findLast((q) => q.quarter === 0) as MoonQuarter,
    };
  }
}

/**
 * Phase angle, illumination, elongation and distance at `at`: what apparentPhaseLongitude,
 * Illumination, AngleFromSun and GeoMoon give, from one computation of the Sun and the Earth and
 * the Moon from its fitted track (GeoMoon within ~1e-13 AU; each of those functions computed its
 * own Moon and Sun, ~5–8 µs apiece).
 */
function instantAt(at: Date, track: MoonTrack): MoonInstant {
  const time = MakeTime(at);
  const moon = geoMoon(track, time);
  const sun = GeoVector(Body.Sun, time, true);
  // Illumination(): the phase angle at the Moon between the Earth and the Sun (heliocentric Earth, no light-time).
  const earth = HelioVector(Body.Earth, time);
  const helioMoon = new Vector(earth.x + moon.x, earth.y + moon.y, earth.z + moon.z, time);
  const phaseAngle = AngleBetween(moon, helioMoon);
  return {
    longitude: phaseLongitude(time, moon, sun, (t) => geoMoon(track, t)),
    fraction: (1 + Math.cos(DEG2RAD * phaseAngle)) / 2,
    elongation: AngleBetween(sun, moon),
    distance: moon.Length(),
  };
}

/** GeoMoon(time) from the fitted track. */
function geoMoon(track: MoonTrack, time: AstroTime): Vector {
  const out = new Float64Array(7);
  track.at(time.tt, out);
  return new Vector(out[4] as number, out[5] as number, out[6] as number, time);
}

/**
 * Calendar convention: a day on which a principal phase occurs (in the local zone) is named
 * after it; any other instant gets the intermediate phase of its elongation.
 */
function phaseOfDay(longitude: number, day: LocalDay, candidates: MoonQuarter[]): PhaseKey {
  const inDay = candidates.find((q) => q.time.date >= day.start && q.time.date < day.end);
  if (inDay) return PRINCIPAL_PHASES[inDay.quarter] as PrincipalPhase;
  if (longitude < 90) return "waxing_crescent";
  if (longitude < 180) return "waxing_gibbous";
  if (longitude < 270) return "waning_gibbous";
  return "waning_crescent";
}

function events(day: LocalDay, sky: MoonSky, zones: TimeZones): MoonEvents {
  const iso = (d: Date | undefined) => (d ? isoInZone(d, day.zone, zones) : null);
  const all = (ds: Date[]) => ds.map((d) => isoInZone(d, day.zone, zones));
  // Long enough for the polar months during which the Moon neither rises nor sets.
  const nextLimit = 40;

  const rises = riseSets(sky, +1, day.start, day.end);
  const sets = riseSets(sky, -1, day.start, day.end);
  const culminations = transits(sky, day.start, day.end);
  return {
    moonrise: iso(rises[0]),
    moonset: iso(sets[0]),
    transit: iso(culminations[0]),
    moonrises: all(rises),
    moonsets: all(sets),
    transits: all(culminations),
    next_moonrise: rises[0] ? null : iso(searchRiseSet(sky, +1, MakeTime(day.end), nextLimit)?.date),
    next_moonset: sets[0] ? null : iso(searchRiseSet(sky, -1, MakeTime(day.end), nextLimit)?.date),
    next_transit: culminations[0] ? null : iso(searchTransit(sky, MakeTime(day.end)).date),
  };
}

/** Computes moon reports; holds the caches, so build one per app (no module-level state). */
export class MoonCalculator {
  constructor(private readonly zones = new TimeZones()) {}

  /** The Moon's geocentric track, fitted per span of days, for every place's rise and set. */
  private readonly track = new MoonTrack();
  private readonly phases = new PhaseTable();
  /** Rise/set/transit per place and local day: the same for every request about that day. */
  private readonly events = new LRUCache<string, MoonEvents>({ max: 10_000 });
  /**
   * Phase angle, illumination, elongation and distance (AU) per instant: a calendar date is
   * read as local noon, so every request about a day asks about the same instant.
   */
  private readonly instants = new LRUCache<number, MoonInstant>({ max: 10_000 });

  /** Everything about the Moon at one instant (and, with an observer, in one local day). */
  report(input: MoonInput): MoonReport {
    const { at, day } = input;
    const zone = day.zone;
    const { previous, upcoming, lastNew } = this.phases.around(at, input.phases);
    const next = upcoming[0] as MoonQuarter;
    const { longitude, fraction, elongation, distance } = this.instantOf(at);
    const key = phaseOfDay(longitude, day, [previous, next]);
    return {
      at: isoInZone(at, zone, this.zones),
      phase: { key, ...PHASES[key] },
      illumination: { fraction: round(fraction, 4), percent: round(fraction * 100, 1) },
      elongation_deg: round(elongation, 2),
      phase_longitude_deg: round(longitude, 2),
      age_days: round((at.getTime() - lastNew.time.date.getTime()) / DAY_MS, 2),
      distance_km: Math.round(distance * KM_PER_AU),
      previous_phase: phaseInstant(previous, zone, this.zones),
      next_phase: phaseInstant(next, zone, this.zones),
      upcoming_phases: upcoming.map((q) => phaseInstant(q, zone, this.zones)),
      events: input.observer ? this.eventsOf(day, input.observer.lat, input.observer.lon) : null,
    };
  }

  private instantOf(at: Date): MoonInstant {
    let found = this.instants.get(at.getTime());
    if (!found) {
      found = instantAt(at, this.track);
      this.instants.set(at.getTime(), found);
    }
    return found;
  }

  private eventsOf(day: LocalDay, lat: number, lon: number): MoonEvents {
    const key = `${lat},${lon},${day.zone},${day.date}`;
    let found = this.events.get(key);
    if (!found) {
      found = events(day, new MoonSky(this.track, new Observer(lat, lon, 0)), this.zones);
      this.events.set(key, found);
    }
    return found;
  }
}
