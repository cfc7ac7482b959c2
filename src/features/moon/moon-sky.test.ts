import {
  AngleFromSun,
  Body,
  C_AUDAY,
  Ecliptic,
  GeoMoon,
  GeoVector,
  Illumination,
  KM_PER_AU,
  MakeTime,
  type MoonQuarter,
  Observer,
  SearchHourAngle,
  SearchRiseSet,
} from "astronomy-engine";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { propertyRuns } from "../../../test/helpers/env.js";
import { useObservedDeltaT } from "../shared/delta-t.js";
import { isoInZone, type LocalDay, resolveWhen, resolveZone, round, TimeZones } from "../shared/geo-time.js";
import { crossings, culminations } from "../shared/rise-set.js";
import { MoonCalculator, type MoonEvents } from "./moon.js";
import { exactTrack, MoonTrack } from "./moon-sky.js";
import { nextQuarter, searchQuarter } from "./phase.js";

/**
 * The report's fast path (the Moon from fitted series, one computation of the Moon and the Sun
 * per instant) against the full computation it replaces: astronomy-engine's own rise/set and
 * hour-angle searches and its per-quantity functions, each computing the Moon afresh.
 */

/** Moonrise, moonset and transit of a local day, as astronomy-engine's searches find them. */
function fullEvents(day: LocalDay, lat: number, lon: number, zones: TimeZones): MoonEvents {
  const observer = new Observer(lat, lon, 0);
  const iso = (d: Date | undefined) => (d ? isoInZone(d, day.zone, zones) : null);
  const all = (ds: Date[]) => ds.map((d) => isoInZone(d, day.zone, zones));
  const rises = crossings(Body.Moon, observer, +1, day.start, day.end);
  const sets = crossings(Body.Moon, observer, -1, day.start, day.end);
  const transits = culminations(Body.Moon, observer, day.start, day.end);
  return {
    moonrise: iso(rises[0]),
    moonset: iso(sets[0]),
    transit: iso(transits[0]),
    moonrises: all(rises),
    moonsets: all(sets),
    transits: all(transits),
    next_moonrise: rises[0] ? null : iso(SearchRiseSet(Body.Moon, observer, +1, day.end, 40)?.date),
    next_moonset: sets[0] ? null : iso(SearchRiseSet(Body.Moon, observer, -1, day.end, 40)?.date),
    next_transit: transits[0] ? null : iso(SearchHourAngle(Body.Moon, observer, 0, day.end, +1).time.date),
  };
}

/**
 * Principal phases around `at` as the report found them before it computed lunations lazily: every
 * lunation from the one before to three after, each searched from three days before its mean new
 * moon.
 */
function fullPhases(at: Date, count: number, zone: string, zones: TimeZones) {
  const SYNODIC_DAYS = 29.530588853;
  const REFERENCE_NEW_MOON_MS = Date.UTC(2000, 0, 6, 18, 14);
  const k = Math.floor((at.getTime() - REFERENCE_NEW_MOON_MS) / (SYNODIC_DAYS * DAY_MS));
  const all: MoonQuarter[] = [];
  for (let i = k - 1; i <= k + 2 + Math.ceil(count / 4); i++) {
    let q = searchQuarter(new Date(REFERENCE_NEW_MOON_MS + (i * SYNODIC_DAYS - 3) * DAY_MS));
    while (q.quarter !== 0) q = nextQuarter(q);
    all.push(q);
    while (all.length % 4 !== 0) all.push(nextQuarter(all[all.length - 1] as MoonQuarter));
  }
  const next = all.findIndex((q) => q.time.date.getTime() > at.getTime());
  const past = all.slice(0, next);
  const iso = (q: MoonQuarter) => isoInZone(q.time.date, zone, zones);
  const lastNew = past.findLast((q) => q.quarter === 0) as MoonQuarter;
  return {
    previous_phase: { time: iso(past[past.length - 1] as MoonQuarter) },
    upcoming_phases: all.slice(next, next + count).map((q) => ({ time: iso(q) })),
    age_days: round((at.getTime() - lastNew.time.date.getTime()) / DAY_MS, 2),
  };
}

/** The instant's numbers, each from its own astronomy-engine function, rounded as the report rounds them. */
function fullInstant(at: Date) {
  const time = MakeTime(at);
  const retarded = GeoMoon(time.AddDays(-GeoMoon(time).Length() / C_AUDAY));
  const d = Ecliptic(retarded).elon - Ecliptic(GeoVector(Body.Sun, time, true)).elon;
  const fraction = Illumination(Body.Moon, at).phase_fraction;
  return {
    illumination: { fraction: round(fraction, 4), percent: round(fraction * 100, 1) },
    elongation_deg: round(AngleFromSun(Body.Moon, at), 2),
    phase_longitude_deg: round(((d % 360) + 360) % 360, 2),
    distance_km: Math.round(GeoMoon(at).Length() * KM_PER_AU),
  };
}

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(1000, 0, 1);
const LAST_DAY = Date.UTC(2999, 11, 31);

/** Latitudes weighted towards the polar circles (days without a rise or set, two rises in a day) and the poles. */
const latitude = fc.oneof(
  fc.double({ min: -90, max: 90, noNaN: true }),
  fc.double({ min: 60, max: 90, noNaN: true }),
  fc.double({ min: -90, max: -60, noNaN: true }),
  fc.constantFrom(90, -90, 0, 66.56, -66.56),
);
const longitude = fc.double({ min: -180, max: 180, noNaN: true });
/** Days weighted towards the observed years, where the API is asked most. */
const day = fc.oneof(
  fc.integer({ min: Date.UTC(1900, 0, 1) / DAY_MS, max: Date.UTC(2100, 0, 1) / DAY_MS }),
  fc.integer({ min: FIRST_DAY / DAY_MS, max: LAST_DAY / DAY_MS }),
);

describe("moon report's fast path against the full computation", { timeout: 120_000 }, () => {
  beforeAll(() => {
    useObservedDeltaT();
  });

  it("the fitted track is within 1e-12 AU of the lunar theory (of date and J2000) and 1e-6″ of the sidereal time's slow terms", () => {
    const track = new MoonTrack();
    const out = new Float64Array(7);
    for (let i = 0; i < 5_000; i++) {
      const time = MakeTime(-365_250 + Math.random() * 730_500); // 1000–3000
      track.at(time.tt, out);
      const exact = exactTrack(time);
      const miss = (i: number) => (out[i] as number) - (exact[i] as number);
      expect(Math.hypot(miss(0), miss(1), miss(2))).toBeLessThan(1e-12);
      expect(Math.abs(miss(3))).toBeLessThan(1e-6);
      expect(Math.hypot(miss(4), miss(5), miss(6))).toBeLessThan(1e-12);
    }
  });

  it("gives the same phases, rise, set, transit, illumination, elongation, phase longitude and distance on any day, anywhere", () => {
    const zones = new TimeZones();
    const moon = new MoonCalculator(zones);
    let polarNights = 0;
    fc.assert(
      fc.property(day, latitude, longitude, fc.integer({ min: 1, max: 12 }), (d, lat, lon, phases) => {
        const zone = resolveZone(undefined, lat, lon);
        const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
        const when = resolveWhen(date, zone, new Date(), zones);
        const report = moon.report({ at: when.at, day: when.day, phases, observer: { lat, lon } });
        expect(report, `${date} ${phases} phases`).toMatchObject(fullPhases(when.at, phases, zone, zones));
        expect(report.events, `${date} ${lat} ${lon}`).toEqual(fullEvents(when.day, lat, lon, zones));
        expect(report, `${date} ${lat} ${lon}`).toMatchObject(fullInstant(when.at));
        if (report.events?.moonrise === null && report.events.moonset === null) polarNights++;
      }),
      { numRuns: propertyRuns(400), seed: 1136 },
    );
    // The polar cases were drawn: days on which the Moon neither rises nor sets.
    expect(polarNights).toBeGreaterThan(propertyRuns(400) / 40);
  });

  it("gives the same numbers at instants within minutes of each principal phase (the phase longitude wraps at new moon)", () => {
    const zones = new TimeZones();
    const moon = new MoonCalculator(zones);
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(2999, 0, 1) }),
        fc.integer({ min: -600_000, max: 600_000 }),
        (ms, offset) => {
          const quarter = searchQuarter(new Date(ms)).time.date.getTime();
          const at = new Date(quarter + offset);
          const when = resolveWhen(at.toISOString(), "UTC", at, zones);
          const report = moon.report({ at: when.at, day: when.day, phases: 1 });
          expect(report, at.toISOString()).toMatchObject(fullInstant(when.at));
        },
      ),
      { numRuns: propertyRuns(300), seed: 1137 },
    );
  });
});
