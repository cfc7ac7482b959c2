import { DeltaT_EspenakMeeus, MakeTime } from "astronomy-engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OBSERVED_MID_YEAR } from "../../../test/fixtures/usno-delta-t.js";
import { type TestApp, testApp } from "../../../test/helpers/app.js";
import { decimalYear, LATEST_OBSERVED_YEAR, observedDeltaT } from "./delta-t.js";
import { OBSERVED_DELTA_T } from "./delta-t-table.js";

/** The ΔT astronomy-engine applies at an instant, in seconds. */
const deltaTInUse = (date: Date) => {
  const time = MakeTime(date);
  return (time.tt - time.ut) * 86_400;
};

describe("ΔT (TT − UT1) used for every moon and sun instant", () => {
  let t: TestApp;
  // The app is the composition root that installs the observed ΔT in astronomy-engine.
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it.each(Object.entries(OBSERVED_MID_YEAR))("1 July %s: within 0.5 s of USNO's published %s s", (year, published) => {
    expect(Math.abs(deltaTInUse(new Date(`${year}-07-01T00:00:00Z`)) - published)).toBeLessThan(0.5);
  });

  it("has no step where the observations end and the extrapolation begins", () => {
    const year = Math.floor(LATEST_OBSERVED_YEAR);
    const start = Date.UTC(year, 0, 1);
    const latestMs = start + (LATEST_OBSERVED_YEAR - year) * (Date.UTC(year + 1, 0, 1) - start);
    const before = deltaTInUse(new Date(latestMs - 3_600_000));
    const after = deltaTInUse(new Date(latestMs + 3_600_000));
    expect(Math.abs(after - before)).toBeLessThan(0.001);
  });

  it("extrapolates gently: within 2 s of the last observation five years on, rising by tidal braking later", () => {
    const latest = deltaTInUse(new Date("2026-10-01T00:00:00Z"));
    expect(Math.abs(deltaTInUse(new Date("2031-10-01T00:00:00Z")) - latest)).toBeLessThan(2);
    // A century on the tidal term alone adds 32 s (Morrison & Stephenson's parabola).
    expect(deltaTInUse(new Date("2126-10-01T00:00:00Z")) - latest).toBeGreaterThan(25);
  });

  it("before 1900 it is astronomy-engine's own Espenak–Meeus, which meets the table at 1900 within 0.2 s", () => {
    const ut = (iso: string) => MakeTime(new Date(iso)).ut;
    expect(observedDeltaT(ut("1850-06-01T00:00:00Z"))).toBe(DeltaT_EspenakMeeus(ut("1850-06-01T00:00:00Z")));
    // Far outside a JS Date's range the polynomials still answer (no NaN into every position).
    expect(observedDeltaT(1e9)).toBe(DeltaT_EspenakMeeus(1e9));
    const edge = ut("1900-01-01T00:00:00Z");
    expect(Math.abs(observedDeltaT(edge) - DeltaT_EspenakMeeus(edge - 1))).toBeLessThan(0.2);
  });
});

describe("observedDeltaT's arithmetic", () => {
  /** The decimal year the plain way, with a Date. */
  const dateYear = (ms: number) => {
    const year = new Date(ms).getUTCFullYear();
    const start = Date.UTC(year, 0, 1);
    return year + (ms - start) / (Date.UTC(year + 1, 0, 1) - start);
  };

  it("reads the decimal year as a Date does, at any instant from 0101 to 9999 and at every year's edges", () => {
    const instants = [0, -1, 1, Date.UTC(2000, 1, 29, 12), Date.UTC(1900, 2, 1)];
    for (let year = 101; year < 10_000; year += 1) {
      const start = Date.UTC(year, 0, 1);
      instants.push(start, start - 1, start + 1, start + 0.5);
    }
    for (let i = 0; i < 20_000; i++)
      instants.push(Date.UTC(101, 0, 1) + Math.random() * (Date.UTC(9999, 0, 1) - Date.UTC(101, 0, 1)));
    for (const ms of instants) expect(decimalYear(ms), String(ms)).toBe(dateYear(ms));
    expect(decimalYear(1e9 * 86_400_000)).toBeNaN();
  });

  /** The table read the plain way: the first row at or after the year, by a linear scan. */
  const scanned = (ut: number) => {
    const year = dateYear(Date.UTC(2000, 0, 1, 12) + ut * 86_400_000);
    if (!(year >= (OBSERVED_DELTA_T[0] as readonly [number, number])[0]) || year > LATEST_OBSERVED_YEAR)
      return undefined;
    let hi = OBSERVED_DELTA_T.findIndex(([y]) => y >= year);
    if (hi <= 0) hi = 1;
    const [y0, v0] = OBSERVED_DELTA_T[hi - 1] as readonly [number, number];
    const [y1, v1] = OBSERVED_DELTA_T[hi] as readonly [number, number];
    return v0 + ((v1 - v0) * (year - y0)) / (y1 - y0);
  };

  it("gives exactly what a linear scan of the table gives, at any instant of the observed years", () => {
    const first = Date.UTC(1900, 0, 1);
    const span = Date.UTC(2026, 9, 1) - first;
    const uts = [0, -36525 + 0.5, 9496.5, 9496.4999]; // J2000, 1900-01-01 0h, the rows' own instants
    for (let i = 0; i < 20_000; i++) uts.push((first + Math.random() * span - Date.UTC(2000, 0, 1, 12)) / 86_400_000);
    for (const ut of uts) {
      const expected = scanned(ut);
      if (expected !== undefined) expect(observedDeltaT(ut), String(ut)).toBe(expected);
    }
  });
});
