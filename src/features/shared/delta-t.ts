import { DeltaT_EspenakMeeus, SetDeltaTFunction } from "astronomy-engine";
import { OBSERVED_DELTA_T } from "./delta-t-table.js";

/**
 * ΔT = TT − UT1 for astronomy-engine: observed values (delta-t-table.ts, USNO/IERS) where they
 * exist, a documented extrapolation after the last one, and astronomy-engine's own
 * Espenak–Meeus polynomials before 1900.
 *
 * Why: astronomy-engine's built-in formula gives ~74.5 s for 2025 where the Earth's observed ΔT is
 * ~69.1 s, so every UT instant it computes for the 2020s (moon phases, rises, sets, sun times) came
 * out 5–6 s early.
 *
 * After the latest observation: ΔT continues at the rate of the last twelve observed months, plus
 * the tidal-braking curvature of the long-term parabola (Morrison & Stephenson: 32 s per century²,
 * i.e. +32·(Δt/100 yr)² s). Back-tested on this table (every start year 1960–2021) it is off by
 * 0.1 s rms one year ahead, 0.4 s at three years, 0.9 s at five and 2.4 s at ten (worst cases
 * 0.3, 1.0, 1.9 and 5.5 s): the Earth's rotation wanders by decades, so no extrapolation is
 * better than that. docs/api.md states it for callers.
 */

const J2000_MS = Date.UTC(2000, 0, 1, 12);
const DAY_MS = 86_400_000;
const FIRST = OBSERVED_DELTA_T[0] as readonly [number, number];
const LATEST = OBSERVED_DELTA_T[OBSERVED_DELTA_T.length - 1] as readonly [number, number];

/** The furthest instant from 1970 a JS Date holds, ms. */
const DATE_LIMIT_MS = 8.64e15;

/**
 * Epoch ms of 1 January 0h UT of `year` (proleptic Gregorian), by arithmetic: what Date.UTC gives
 * for years from 100 on, without a Date (every AstroTime asks for ΔT, so this runs per instant).
 */
function yearStartMs(year: number): number {
  // Days from 1970-01-01 to 1 January of `year` (Hinnant's days_from_civil, March-based years).
  const y = year - 1;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + 306;
  return (era * 146_097 + doe - 719_468) * DAY_MS;
}

/** Decimal year of an instant: 2025.0 is 1 January 2025 0h UT, 2025.5 is half-way through 2025. */
export function decimalYear(ms: number): number {
  if (!(Math.abs(ms) <= DATE_LIMIT_MS)) return Number.NaN;
  let year = 1970 + Math.floor(ms / (365.2425 * DAY_MS));
  while (ms < yearStartMs(year)) year--;
  while (ms >= yearStartMs(year + 1)) year++;
  const start = yearStartMs(year);
  return year + (ms - start) / (yearStartMs(year + 1) - start);
}

/** Index of the first row at or after `year` (a binary search: every new instant asks). */
function firstRowFrom(year: number): number {
  let lo = 0;
  let hi = OBSERVED_DELTA_T.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((OBSERVED_DELTA_T[mid] as readonly [number, number])[0] >= year) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Linear interpolation in the observed table; `year` must lie within it. */
function interpolate(year: number): number {
  let hi = firstRowFrom(year);
  if (hi <= 0) hi = 1;
  const [y0, v0] = OBSERVED_DELTA_T[hi - 1] as readonly [number, number];
  const [y1, v1] = OBSERVED_DELTA_T[hi] as readonly [number, number];
  return v0 + ((v1 - v0) * (year - y0)) / (y1 - y0);
}

/** Seconds per year over the last twelve observed months. */
const RECENT_RATE = LATEST[1] - interpolate(LATEST[0] - 1);

/** ΔT in seconds; astronomy-engine's signature: `ut` in days since 2000-01-01 12:00 UT. */
export function observedDeltaT(ut: number): number {
  const year = decimalYear(J2000_MS + ut * DAY_MS);
  // Before the table, or beyond the range of a JS Date (±275,000 years): astronomy-engine's own.
  if (!(year >= FIRST[0])) return DeltaT_EspenakMeeus(ut);
  if (year <= LATEST[0]) return interpolate(year);
  const ahead = year - LATEST[0];
  return LATEST[1] + RECENT_RATE * ahead + 32 * (ahead / 100) ** 2;
}

/** Decimal year of the latest observation: instants after it depend on the extrapolation. */
export const LATEST_OBSERVED_YEAR = LATEST[0];

/**
 * Makes astronomy-engine use `observedDeltaT`. Its ΔT setting is process-wide (a variable inside
 * the library, not an option per call), so this is called from one place, the composition root
 * (`createApp`); calling it again is harmless, it sets the same pure function.
 */
export function useObservedDeltaT(): void {
  SetDeltaTFunction(observedDeltaT);
}
