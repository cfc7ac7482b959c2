import {
  AstroTime,
  Atmosphere,
  DEG2RAD,
  e_tilt,
  GeoMoon,
  KM_PER_AU,
  MakeTime,
  type Observer,
  RAD2DEG,
  RAD2HOUR,
  RotateVector,
  Rotation_EQJ_EQD,
  Search,
} from "astronomy-engine";
import { LRUCache } from "lru-cache";
import { eventsIn } from "../shared/rise-set.js";

/**
 * Moonrise, moonset and transit as astronomy-engine's SearchRiseSet and SearchHourAngle find them,
 * at a fraction of the cost: the same searches (the code below follows theirs step by step), fed
 * by the Moon's position from Chebyshev series instead of the full lunar theory at every step.
 *
 * A search step asked astronomy-engine for the Moon's topocentric position: its lunar theory
 * (~5 µs), precession and nutation, the sidereal time. The geocentric part (the Moon's position in
 * the equator and equinox of date, and the sidereal time's slow terms) does not depend on the
 * observer and is smooth: MoonTrack fits it over spans of SPAN_DAYS with NODES exact evaluations
 * each, and keeps the spans (bounded) for every place and day that falls in them. The fit is
 * within ~1e-13 AU (a few centimetres) of the theory, which moves an event by microseconds; the
 * rest (the observer's place, the Earth's rotation, the altitude) is computed as astronomy-engine
 * computes it.
 */

const SPAN_DAYS = 8;
const NODES = 16;
/** cos(π·j·(k+½)/N), the Chebyshev fit's weights. */
const WEIGHTS = Float64Array.from({ length: NODES * NODES }, (_, i) =>
  Math.cos((Math.PI * Math.floor(i / NODES) * ((i % NODES) + 0.5)) / NODES),
);
/**
 * Series per span: x, y, z of the Moon (AU, equator of date), the sidereal time's slow part, and
 * x, y, z of the Moon in astronomy-engine's J2000 frame (GeoMoon's own).
 */
const SERIES = 7;

/** astronomy-engine's constants for the Moon and the Earth (not exported by it). */
const MOON_RADIUS_AU = 1738.1 / KM_PER_AU;
const EARTH_EQUATORIAL_RADIUS_KM = 6378.1366;
const EARTH_FLATTENING = 0.996647180302104;
const SOLAR_DAYS_PER_SIDEREAL_DAY = 0.9972695717592592;
/** The altitude SearchRiseSet seeks for an observer at height 0: 34′ of refraction, no dip. */
const RISE_SET_ALTITUDE = -((34 / 60) * Atmosphere(0).density);
/** Steps of astronomy-engine's rise/set search: 10.08 hours, Nyquist-safe for the Moon's ~25 h day. */
const RISE_SET_DT = 0.42;

/**
 * The Moon's geocentric position (equator of date) and the sidereal time's slow terms, as
 * Chebyshev series over spans of SPAN_DAYS of terrestrial time (the theory's own time scale; UT
 * would carry ΔT's bends into the fit), computed once per span and kept (at most `spans` of
 * them). Hold one per calculator.
 */
export class MoonTrack {
  private readonly fits: LRUCache<number, Float64Array>;
  private lastIndex = Number.NaN;
  private lastFit: Float64Array = new Float64Array(0);

  constructor(spans = 64) {
    this.fits = new LRUCache({ max: spans });
  }

  /**
   * Writes x, y, z (AU, equator of date), `st` (arcseconds, see siderealHours) and x, y, z (AU,
   * J2000, as GeoMoon) at `tt` (terrestrial time, days from J2000) into `out`; `series` 4 stops
   * after `st`.
   */
  at(tt: number, out: Float64Array, series = SERIES): void {
    const index = Math.floor(tt / SPAN_DAYS);
    if (index !== this.lastIndex) {
      let fit = this.fits.get(index);
      if (!fit) {
        fit = fitSpan(index * SPAN_DAYS);
        this.fits.set(index, fit);
      }
      this.lastIndex = index;
      this.lastFit = fit;
    }
    const fit = this.lastFit;
    const x = (2 * (tt - index * SPAN_DAYS)) / SPAN_DAYS - 1;
    for (let s = 0; s < series; s++) {
      const base = s * NODES;
      let b1 = 0;
      let b2 = 0;
      for (let j = NODES - 1; j >= 1; j--) {
        const t = 2 * x * b1 - b2 + (fit[base + j] as number);
        b2 = b1;
        b1 = t;
      }
      out[s] = x * b1 - b2 + (fit[base] as number) / 2;
    }
  }
}

/** The exact values the series stand for, at one instant. */
export function exactTrack(time: AstroTime): number[] {
  const j2000 = GeoMoon(time);
  const moon = RotateVector(Rotation_EQJ_EQD(time), j2000);
  // astronomy-engine's sidereal_time without the Earth rotation angle: the equation of the
  // equinoxes and the precession polynomial, in arcseconds.
  const t = time.tt / 36525;
  const st =
    15 * e_tilt(time).ee +
    0.014506 +
    ((((-0.0000000368 * t - 0.000029956) * t - 0.00000044) * t + 1.3915817) * t + 4612.156534) * t;
  return [moon.x, moon.y, moon.z, st, j2000.x, j2000.y, j2000.z];
}

function fitSpan(from: number): Float64Array {
  const values: number[][] = [];
  for (let k = 0; k < NODES; k++) {
    const x = Math.cos((Math.PI * (k + 0.5)) / NODES);
    values.push(exactTrack(AstroTime.FromTerrestrialTime(from + ((x + 1) * SPAN_DAYS) / 2)));
  }
  const fit = new Float64Array(SERIES * NODES);
  for (let s = 0; s < SERIES; s++) {
    for (let j = 0; j < NODES; j++) {
      let sum = 0;
      for (let k = 0; k < NODES; k++)
        sum += ((values[k] as number[])[s] as number) * (WEIGHTS[j * NODES + k] as number);
      fit[s * NODES + j] = (2 / NODES) * sum;
    }
  }
  return fit;
}

/** Greenwich apparent sidereal time in hours, as astronomy-engine's sidereal_time computes it. */
function siderealHours(ut: number, st: number): number {
  const thet1 = 0.779057273264 + 0.00273781191135448 * ut;
  const thet3 = ut % 1;
  let theta = 360 * ((thet1 + thet3) % 1);
  if (theta < 0) theta += 360;
  let gst = ((st / 3600 + theta) % 360) / 15;
  if (gst < 0) gst += 24;
  return gst;
}

/** The Moon as one observer (height 0) sees it: altitude of its upper limb and hour angle. */
export class MoonSky {
  private readonly scratch = new Float64Array(SERIES);
  private readonly lon: number;
  /** The observer's distance from the Earth's axis and from the equator's plane, AU (astronomy-engine's terra). */
  private readonly axial: number;
  private readonly polar: number;
  private readonly sinlat: number;
  private readonly coslat: number;
  private readonly sinlon: number;
  private readonly coslon: number;
  /** Bound on the altitude's rate, degrees per day (astronomy-engine's MaxAltitudeSlope for the Moon). */
  readonly maxSlope: number;
  /** The last position computed: right ascension (hours) and distance (AU), topocentric, of date. */
  ra = 0;
  private gast = 0;
  private x = 0;
  private y = 0;
  private z = 0;

  constructor(
    private readonly track: MoonTrack,
    observer: Observer,
  ) {
    const phi = observer.latitude * DEG2RAD;
    const sinphi = Math.sin(phi);
    const cosphi = Math.cos(phi);
    const c = 1 / Math.hypot(cosphi, EARTH_FLATTENING * sinphi);
    const s = EARTH_FLATTENING * EARTH_FLATTENING * c;
    const ht = observer.height / 1000;
    this.axial = ((EARTH_EQUATORIAL_RADIUS_KM * c + ht) * cosphi) / KM_PER_AU;
    this.polar = ((EARTH_EQUATORIAL_RADIUS_KM * s + ht) * sinphi) / KM_PER_AU;
    this.lon = observer.longitude;
    this.sinlat = sinphi;
    this.coslat = cosphi;
    this.sinlon = Math.sin(this.lon * DEG2RAD);
    this.coslon = Math.cos(this.lon * DEG2RAD);
    this.maxSlope = Math.abs((360 / SOLAR_DAYS_PER_SIDEREAL_DAY - 4.5) * Math.cos(phi)) + Math.abs(8.2 * Math.sin(phi));
  }

  /**
   * Topocentric vector of the Moon (equator of date) at `time` into `x`, `y`, `z`; sets `ra` and
   * the sidereal time.
   */
  private topocentric(time: AstroTime): void {
    const m = this.scratch;
    this.track.at(time.tt, m, 4);
    const gast = siderealHours(time.ut, m[3] as number);
    const stlocl = (15 * gast + this.lon) * DEG2RAD;
    const x = (m[0] as number) - this.axial * Math.cos(stlocl);
    const y = (m[1] as number) - this.axial * Math.sin(stlocl);
    let ra = RAD2HOUR * Math.atan2(y, x);
    if (ra < 0) ra += 24;
    this.x = x;
    this.y = y;
    this.z = (m[2] as number) - this.polar;
    this.ra = ra;
    this.gast = gast;
  }

  /** Altitude of the upper limb in degrees, without refraction (astronomy-engine's rise/set `altdiff`). */
  altitude(time: AstroTime): number {
    this.topocentric(time);
    const { x, y, z } = this;
    const dist = Math.sqrt(x * x + y * y + z * z);
    // Horizon(): the body's direction against the observer's zenith, north and west, each turned
    // by the sidereal time (astronomy-engine's spin()).
    const angr = -15 * this.gast * DEG2RAD;
    const c = Math.cos(angr);
    const s = Math.sin(angr);
    const { coslat, sinlat, coslon, sinlon } = this;
    const pz =
      (x * (c * coslat * coslon + s * coslat * sinlon) + y * (c * coslat * sinlon - s * coslat * coslon) + z * sinlat) /
      dist;
    const pn =
      (x * (-c * sinlat * coslon - s * sinlat * sinlon) +
        y * (-c * sinlat * sinlon + s * sinlat * coslon) +
        z * coslat) /
      dist;
    const pw = (x * (c * sinlon - s * coslon) + y * (-c * coslon - s * sinlon)) / dist;
    const zd = RAD2DEG * Math.atan2(Math.hypot(pn, pw), pz);
    return 90 - zd + RAD2DEG * Math.asin(MOON_RADIUS_AU / dist);
  }

  /** Sidereal hours until the Moon reaches `hourAngle` (astronomy-engine's SearchHourAngle step). */
  hourAngleGap(time: AstroTime, hourAngle: number): number {
    this.topocentric(time);
    return (hourAngle + this.ra - this.lon / 15 - this.gast) % 24;
  }
}

interface Ascent {
  tx: AstroTime;
  ty: AstroTime;
  ax: number;
  ay: number;
}

/** astronomy-engine's FindAscent: a bracket where `f` rises through zero, by bounded bisection. */
function findAscent(
  depth: number,
  f: (t: AstroTime) => number,
  maxSlope: number,
  t1: AstroTime,
  t2: AstroTime,
  a1: number,
  a2: number,
): Ascent | null {
  if (a1 < 0 && a2 >= 0) return { tx: t1, ty: t2, ax: a1, ay: a2 };
  if (a1 >= 0 && a2 < 0) return null;
  if (depth > 17) throw new Error("Excessive recursion in rise/set ascent search.");
  const dt = t2.ut - t1.ut;
  if (dt * 86_400 < 1) return null;
  const da = Math.min(Math.abs(a1), Math.abs(a2));
  if (da > maxSlope * (dt / 2)) return null;
  const tmid = new AstroTime((t1.ut + t2.ut) / 2);
  const amid = f(tmid);
  return (
    findAscent(1 + depth, f, maxSlope, t1, tmid, a1, amid) || findAscent(1 + depth, f, maxSlope, tmid, t2, amid, a2)
  );
}

/**
 * The first moonrise (+1) or moonset (−1) after `start` within `limitDays` (forward), or null:
 * astronomy-engine's SearchRiseSet for the Moon and an observer at height 0.
 */
export function searchRiseSet(sky: MoonSky, direction: 1 | -1, start: AstroTime, limitDays: number): AstroTime | null {
  const f = (t: AstroTime) => direction * (sky.altitude(t) - RISE_SET_ALTITUDE);
  let t1 = start;
  let a1 = f(t1);
  for (;;) {
    const t2 = t1.AddDays(RISE_SET_DT);
    const a2 = f(t2);
    const ascent = findAscent(0, f, sky.maxSlope, t1, t2, a1, a2);
    if (ascent) {
      const time = Search(f, ascent.tx, ascent.ty, {
        dt_tolerance_seconds: 0.1,
        init_f1: ascent.ax,
        init_f2: ascent.ay,
      });
      if (!time) throw new Error(`Rise/set search failed after finding ascent at ${t1.date.toISOString()}`);
      return time.ut > start.ut + limitDays ? null : time;
    }
    if (t2.ut > start.ut + limitDays) return null;
    t1 = t2;
    a1 = a2;
  }
}

/** The next upper culmination after `start`: astronomy-engine's SearchHourAngle(Moon, observer, 0, start, +1). */
export function searchTransit(sky: MoonSky, start: AstroTime): AstroTime {
  let time = start;
  for (let iter = 1; ; iter++) {
    let gap = sky.hourAngleGap(time, 0);
    if (iter === 1) {
      if (gap < 0) gap += 24;
    } else if (gap < -12) gap += 24;
    else if (gap > 12) gap -= 24;
    if (Math.abs(gap) * 3600 < 0.1) return time;
    time = time.AddDays((gap / 24) * SOLAR_DAYS_PER_SIDEREAL_DAY);
  }
}

/** Every moonrise (+1) or moonset (−1) in [from, until), as the shared `crossings` finds them. */
export function riseSets(sky: MoonSky, direction: 1 | -1, from: Date, until: Date): Date[] {
  return eventsIn(from, until, (t, daysLeft) => searchRiseSet(sky, direction, MakeTime(t), daysLeft)?.date);
}

/** Every upper culmination in [from, until), as the shared `culminations` finds them. */
export function transits(sky: MoonSky, from: Date, until: Date): Date[] {
  return eventsIn(from, until, (t) => searchTransit(sky, MakeTime(t)).date);
}
