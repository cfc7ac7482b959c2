import fc from "fast-check";
import { DateTime, IANAZone } from "luxon";
import { describe, expect, it } from "vitest";
import { propertyRuns, sampled } from "../../../test/helpers/env.js";
import { isDateOrDateTime, isoInZone, isoLocal, LocalToday, resolveWhen, TimeZones } from "./geo-time.js";
import { CachedIanaZone } from "./zones.js";

/**
 * The per-hour offset cache (TimeZones) against plain luxon: the same ISO strings and local
 * days for every zone, instant and date, including the milliseconds around transitions.
 */

const ZONES = ["UTC", ...Intl.supportedValuesOf("timeZone")];
const TRICKY = [
  "Europe/London",
  "America/New_York",
  "America/Sao_Paulo",
  "America/Santiago",
  "America/St_Johns",
  "Australia/Lord_Howe",
  "Asia/Kathmandu",
  "Pacific/Apia",
  "Pacific/Chatham",
  "Africa/Casablanca",
  "Asia/Tehran",
  "Europe/Dublin",
  "Antarctica/Troll",
];

const plainOffset = (zone: string, ms: number) => IANAZone.create(zone).offset(ms);

/** Offset changes of `zone` in [from, to), to the millisecond (weekly steps, then bisection). */
function transitions(zone: string, from: number, to: number): number[] {
  const STEP = 7 * 86_400_000;
  const found: number[] = [];
  for (let t = from; t < to; t += STEP) {
    if (plainOffset(zone, t) === plainOffset(zone, t + STEP)) continue;
    let lo = t;
    let hi = t + STEP;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (plainOffset(zone, mid) === plainOffset(zone, t)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}

const instant = fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(2999, 11, 31) });

describe("isoLocal", () => {
  /** What it stands for: toISOString without the Z, the milliseconds only when not 0. */
  const viaDate = (ms: number) => {
    const d = new Date(ms);
    return d.toISOString().slice(0, d.getUTCMilliseconds() === 0 ? 19 : 23);
  };

  it("writes what toISOString writes, years 0000 to 9999, whole and fractional milliseconds", () => {
    // Year 0's first day (Date.UTC would read a year 0 as 1900).
    const year0 = new Date(0).setUTCFullYear(0, 0, 1);
    const edges = [
      Date.UTC(1970, 0, 1),
      -1,
      -0.5,
      1.5,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2100, 1, 28, 12),
      Date.UTC(2400, 1, 29),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (const ms of [...edges, year0, year0 + 86_399_999]) expect(isoLocal(ms), String(ms)).toBe(viaDate(ms));
    fc.assert(
      fc.property(fc.double({ min: year0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999), noNaN: true }), (ms) => {
        expect(isoLocal(ms)).toBe(viaDate(ms));
      }),
      { numRuns: propertyRuns(20_000), seed: 63 },
    );
    fc.assert(
      fc.property(fc.integer({ min: year0 / 1000, max: Date.UTC(9999, 11, 31) / 1000 }), (s) => {
        expect(isoLocal(s * 1000)).toBe(viaDate(s * 1000));
      }),
      { numRuns: propertyRuns(20_000), seed: 64 },
    );
  });
});

// Thousands of generated cases: CPU-bound, given room on a loaded 2-core host.
describe("TimeZones: cached offsets give luxon's results", { timeout: 120_000 }, () => {
  it("isoInZone on random zones and instants (years 1000–2999), fresh and warm caches", () => {
    const warm = new TimeZones();
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instant, (zone, ms) => {
        const at = new Date(ms);
        const expected = isoInZone(at, zone);
        expect(isoInZone(at, zone, warm)).toBe(expected);
        expect(isoInZone(at, zone, new TimeZones())).toBe(expected);
      }),
      { numRuns: propertyRuns(5_000), seed: 61 },
    );
  });

  it("isoInZone at and around every transition of tricky zones (1840–2040)", () => {
    const zones = new TimeZones();
    let checked = 0;
    for (const zone of TRICKY) {
      const list = transitions(zone, Date.UTC(1840, 0, 1), Date.UTC(2040, 0, 1));
      expect(list.length, zone).toBeGreaterThan(0);
      for (const t of sampled(list)) {
        // Warm the transition's hour from the far side first, then probe the edges.
        for (const d of [3_599_999, -3_600_000, -1, 0, 1, -1000, 999, 1000, 1800_000, -1800_000, 7_200_000]) {
          const at = new Date(t + d);
          expect(isoInZone(at, zone, zones), `${zone} ${at.toISOString()}`).toBe(isoInZone(at, zone));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(propertyRuns(5_000));
  });

  const dateArb = fc.oneof(
    fc.constant(undefined),
    fc
      .date({ min: new Date(Date.UTC(1000, 0, 1)), max: new Date(Date.UTC(2999, 11, 30)), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
    fc
      .date({ min: new Date(Date.UTC(1000, 0, 1)), max: new Date(Date.UTC(2999, 11, 30)), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 19)),
    fc
      .date({ min: new Date(Date.UTC(1000, 0, 1)), max: new Date(Date.UTC(2999, 11, 30)), noInvalidDate: true })
      .map((d) => d.toISOString()),
  );

  it("resolveWhen: the same instant and local day (start, end, date) for dates, date-times and now", () => {
    const zones = new TimeZones();
    fc.assert(
      fc.property(fc.constantFrom(...ZONES, ...TRICKY), dateArb, instant, (zone, date, now) => {
        const expected = resolveWhen(date, zone, new Date(now));
        expect(resolveWhen(date, zone, new Date(now), zones)).toEqual(expected);
        // Again: a calendar date now comes from the zone's day cache.
        expect(resolveWhen(date, zone, new Date(now), zones)).toEqual(expected);
      }),
      { numRuns: propertyRuns(5_000), seed: 62 },
    );
  });

  it("resolveWhen on the days of transitions (23- and 25-hour days, skipped midnights)", () => {
    const zones = new TimeZones();
    for (const zone of TRICKY) {
      for (const t of sampled(transitions(zone, Date.UTC(1990, 0, 1), Date.UTC(2030, 0, 1)))) {
        for (const d of [-86_400_000, 0, 86_400_000]) {
          const date = isoInZone(new Date(t + d), zone).slice(0, 10);
          expect(resolveWhen(date, zone, new Date(t), zones), `${zone} ${date}`).toEqual(
            resolveWhen(date, zone, new Date(t)),
          );
        }
      }
    }
    const london = resolveWhen("2024-03-31", "Europe/London", new Date(), zones).day;
    expect(london.end.getTime() - london.start.getTime()).toBe(23 * 3_600_000);
  });

  it("UTC stays luxon's fixed zone (Z), names luxon does not know stay invalid", () => {
    const zones = new TimeZones();
    expect(isoInZone(new Date(Date.UTC(2024, 0, 25, 17, 54, 12)), "UTC", zones)).toBe("2024-01-25T17:54:12Z");
    expect(zones.get("Nowhere/Atlantis").isValid).toBe(false);
    expect(isoInZone(new Date(Date.UTC(2024, 6, 1, 12)), "Europe/London", zones)).toBe("2024-07-01T13:00:00+01:00");
  });

  const plainToday = (zone: string, ms: number) => DateTime.fromJSDate(new Date(ms)).setZone(zone).toISODate();
  const plainMidnight = (zone: string, ms: number) =>
    DateTime.fromMillis(ms, { zone }).startOf("day").plus({ days: 1 }).toMillis();

  it("LocalToday: luxon's date in the zone, through a clock walking across midnights and transitions", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES, ...TRICKY),
        instant,
        fc.array(fc.integer({ min: 0, max: 3 * 3_600_000 }), { minLength: 1, maxLength: 60 }),
        (zone, start, steps) => {
          const today = new LocalToday();
          let ms = start;
          for (const step of steps) {
            ms += step;
            // nextMidnight first: what get() kept is still the previous step's minute.
            expect(today.nextMidnight(zone, new Date(ms))).toBe(plainMidnight(zone, ms));
            expect(today.get(zone, new Date(ms))).toBe(plainToday(zone, ms));
            // The minute's last millisecond: a kept midnight must be that instant's too.
            const end = Math.floor(ms / 60_000) * 60_000 + 59_999;
            expect(today.nextMidnight(zone, new Date(end))).toBe(plainMidnight(zone, end));
          }
        },
      ),
      { numRuns: propertyRuns(2_000), seed: 63 },
    );
  });

  it("LocalToday: the last millisecond before local midnight and the first after", () => {
    const today = new LocalToday();
    for (const zone of TRICKY) {
      for (const t of sampled(transitions(zone, Date.UTC(2000, 0, 1), Date.UTC(2030, 0, 1)))) {
        const midnight = DateTime.fromMillis(t, { zone }).plus({ days: 1 }).startOf("day").toMillis();
        for (const d of [-60_001, -60_000, -1, 0, 1, 59_999, 60_000]) {
          for (const ms of [midnight + d, t + d]) {
            expect(today.get(zone, new Date(ms)), `${zone} ${new Date(ms).toISOString()}`).toBe(plainToday(zone, ms));
            expect(today.nextMidnight(zone, new Date(ms)), zone).toBe(plainMidnight(zone, ms));
          }
        }
      }
    }
    expect(today.get("Asia/Tokyo", new Date(Date.UTC(2024, 0, 1, 14, 59, 59, 999)))).toBe("2024-01-01");
    expect(today.get("Asia/Tokyo", new Date(Date.UTC(2024, 0, 1, 15)))).toBe("2024-01-02");
  });
});

describe("the date parameter's check", () => {
  it("takes a YYYY-MM-DD exactly when luxon reads it as a real day (every month 00–13 and day 00–32 of years 1000–2999)", () => {
    const two = (n: number) => String(n).padStart(2, "0");
    const disagree: string[] = [];
    let real = 0;
    for (const year of sampled(Array.from({ length: 2000 }, (_, i) => 1000 + i))) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const date = `${year}-${two(month)}-${two(day)}`;
          const valid = DateTime.fromISO(date, { zone: "UTC" }).isValid;
          if (isDateOrDateTime(date) !== valid) disagree.push(date);
          if (valid) real++;
        }
      }
    }
    expect(disagree).toEqual([]);
    expect(real).toBeGreaterThan(propertyRuns(2000) * 365);
  });
});

describe("CachedIanaZone's own offset reading", { timeout: 120_000 }, () => {
  it("gives luxon's IANAZone offset for every zone at random instants (years 1–2999) and around transitions", () => {
    const zones = ZONES.filter((z) => z !== "UTC").map((z) => [new CachedIanaZone(z), IANAZone.create(z)] as const);
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: -62_135_596_800_000, max: Date.UTC(2999, 11, 31) }), // 0001-01-01 to 2999
        ([ours, luxons], ms) => {
          expect(ours.uncached(ms), `${ours.name} ${ms}`).toBe(luxons.offset(ms));
        },
      ),
      { numRuns: propertyRuns(20_000), seed: 64 },
    );
    for (const zone of TRICKY) {
      const ours = new CachedIanaZone(zone);
      const luxons = IANAZone.create(zone);
      for (const t of transitions(zone, Date.UTC(1900, 0, 1), Date.UTC(2040, 0, 1)))
        for (const ms of [t - 1000, t - 1, t, t + 1, t + 999])
          expect(ours.uncached(ms), `${zone} ${ms}`).toBe(luxons.offset(ms));
    }
  });
});
