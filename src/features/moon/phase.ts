import {
  type AstroTime,
  Body,
  C_AUDAY,
  Ecliptic,
  GeoMoon,
  GeoVector,
  MakeTime,
  MoonQuarter,
  Search,
  SearchMoonQuarter,
  type Vector,
} from "astronomy-engine";

type Instant = Parameters<typeof MakeTime>[0];

/**
 * The Moon's phase angle: apparent geocentric ecliptic longitude of the Moon minus that of the
 * Sun, 0–360° (0 new, 90 first quarter, 180 full, 270 last quarter) — the definition the
 * almanacs (USNO, Meeus ch. 49, Espenak's catalogue) use.
 *
 * astronomy-engine's own `MoonPhase` takes the Sun without aberration (`GeoVector(Sun, t,
 * false)`): the Sun comes out ~20.5″ too far east, and the Moon, gaining ~0.5″ a second, reaches
 * every phase ~40 s late. Here the Sun is apparent (light-time and aberration) and the Moon is
 * taken at the light-time-retarded instant (~1.3 s, ~0.7″).
 */
export function apparentPhaseLongitude(at: Instant): number {
  const time = MakeTime(at);
  return phaseLongitude(time, GeoMoon(time), GeoVector(Body.Sun, time, true));
}

/**
 * The same from the Moon's geometric position (GeoMoon) and the Sun's apparent one
 * (GeoVector(Sun, …, true)) at `time`, for a caller that has them already (and `moonAt`, its
 * source of GeoMoon for the light-time-retarded Moon).
 */
export function phaseLongitude(
  time: AstroTime,
  geometricMoon: Vector,
  apparentSun: Vector,
  moonAt: (time: AstroTime) => Vector = GeoMoon,
): number {
  const moon = moonAt(time.AddDays(-geometricMoon.Length() / C_AUDAY));
  const d = Ecliptic(moon).elon - Ecliptic(apparentSun).elon;
  return ((d % 360) + 360) % 360;
}

/** The principal phase nearest after `start`, by the apparent definition above. */
export function searchQuarter(start: Instant): MoonQuarter {
  // astronomy-engine's search lands within ~1 minute of the apparent instant: refine around it.
  const rough = SearchMoonQuarter(start);
  const target = rough.quarter * 90;
  const offset = (t: ReturnType<typeof MakeTime>) => ((apparentPhaseLongitude(t) - target + 540) % 360) - 180;
  const window = 0.01; // days (14 minutes) either side
  const time = Search(offset, rough.time.AddDays(-window), rough.time.AddDays(window), { dt_tolerance_seconds: 0.1 });
  return time ? new MoonQuarter(rough.quarter, time) : rough;
}

/** The principal phase after `q`. */
export function nextQuarter(q: MoonQuarter): MoonQuarter {
  // A quarter lunation is 6.6–8.2 days: six days on is safely before the next one.
  return searchQuarter(q.time.AddDays(6));
}
