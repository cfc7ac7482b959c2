import fc from "fast-check";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moonCrossings } from "../../../test/fixtures/low-precision-moon.js";
import { errorOf, type TestApp, testApp } from "../../../test/helpers/app.js";
import { propertyRuns } from "../../../test/helpers/env.js";
import { documentedGet, exampleOf, examplesOf } from "../../../test/helpers/openapi.js";
import { resolveWhen, resolveZone, TimeZones } from "../shared/geo-time.js";
import { MoonCalculator } from "./moon.js";
import { MOON_UNITS, moonJson } from "./route.js";
import type { MoonResponseBody } from "./schema.js";
import { USNO_PHASES } from "./usno-phases.fixture.js";

const TWO_MINUTES_MS = 120_000;

describe("principal phases agree with USNO to ±2 minutes", () => {
  const fixtures = Object.entries(USNO_PHASES).flatMap(([key, times]) => times.map((t) => ({ key, t })));

  it("has at least 24 published instants from 2024–2026", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(24);
  });

  const moon = new MoonCalculator();
  it.each(fixtures)("$key at $t UT", ({ key, t }) => {
    const usno = new Date(`${t}:00Z`);
    // Asked from a day before, the next principal phase must be this one.
    const at = new Date(usno.getTime() - 86_400_000);
    const report = moon.report({ at, day: resolveWhen(at.toISOString(), "UTC", at).day, phases: 1 });
    expect(report.next_phase.key).toBe(key);
    expect(Math.abs(Date.parse(report.next_phase.time) - usno.getTime())).toBeLessThanOrEqual(TWO_MINUTES_MS);
  });
});

describe("GET /v1/moon", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ DEMO_HOURLY_LIMIT: "100000" });
  });
  afterAll(() => t.close());

  const get = async (query: string) => {
    const res = await t.app.request(`/v1/moon${query}`);
    return { res, body: (await res.json()) as MoonResponseBody & { events: NonNullable<MoonResponseBody["events"]> } };
  };

  it("describes the full moon day of 2024-01-25 in London, with rise, set, and the next transit", async () => {
    const { res, body } = await get("?date=2024-01-25&lat=51.5&lon=-0.1");
    expect(res.status).toBe(200);
    expect(body.tz).toBe("Europe/London");
    expect(body.date).toBe("2024-01-25");
    expect(body.at).toBe("2024-01-25T12:00:00+00:00");
    expect(body.phase).toEqual({ key: "full_moon", name: "Full Moon", emoji: "🌕" });
    expect(body.illumination.fraction).toBeGreaterThan(0.99);
    expect(body.illumination.percent).toBeCloseTo(body.illumination.fraction * 100, 1);
    expect(body.age_days).toBeGreaterThan(13.5);
    expect(body.age_days).toBeLessThan(14.5);
    expect(body.distance_km).toBeGreaterThan(356_000);
    expect(body.distance_km).toBeLessThan(407_000);
    expect(body.previous_phase.key).toBe("first_quarter");
    expect(body.next_phase.key).toBe("full_moon");
    expect(body.upcoming_phases.map((p) => p.key)).toEqual(["full_moon", "last_quarter", "new_moon", "first_quarter"]);
    // Full moon: it rises near sunset and culminates after local midnight, so this day has no transit.
    expect(body.events.moonrise).toMatch(/^2024-01-25T1[56]:\d\d:\d\d\+00:00$/);
    expect(body.events.moonset).toMatch(/^2024-01-25T0[78]:\d\d:\d\d\+00:00$/);
    expect(body.events.transit).toBeNull();
    expect(body.events.next_transit).toMatch(/^2024-01-26T00:\d\d:\d\d\+00:00$/);
    expect(body.events.next_moonrise).toBeNull();
    expect(body.units.distance_km).toBe("kilometres");
  });

  it("keeps a pinned answer per query: two apps asked the same queries in opposite orders answer each alike", async () => {
    // Queries of one date that differ in one part each (date form, tz, place, phases): a kept
    // answer found under another query's key would differ between the two orders.
    const queries = [
      "?date=2024-01-25",
      "?date=2024-01-25&tz=Asia/Tokyo",
      "?date=2024-01-25&lat=51.5&lon=-0.1",
      "?date=2024-01-25&lat=51.5&lon=-0.2",
      "?date=2024-01-25&lat=-33.9&lon=-0.1",
      "?date=2024-01-25&lat=51.5&lon=-0.1&tz=UTC",
      "?date=2024-01-25&phases=2",
      "?date=2024-01-25T13:00:00",
      "?date=2024-01-25T12:00:00Z&tz=Asia/Tokyo",
      "?date=2024-01-26",
    ];
    const other = await testApp({ DEMO_HOURLY_LIMIT: "100000" });
    try {
      const answer = async (app: TestApp, query: string) => {
        const res = await app.app.request(`/v1/moon${query}`);
        expect(res.status, query).toBe(200);
        return `${res.headers.get("etag")} ${await res.text()}`;
      };
      const forward = [];
      for (const q of queries) forward.push(await answer(t, q));
      const backward = [];
      for (const q of [...queries].reverse()) backward.push(await answer(other, q));
      expect(backward.reverse()).toEqual(forward);
      expect(new Set(forward).size).toBe(queries.length);
      for (const [i, q] of queries.entries()) expect(await answer(t, q)).toBe(forward[i]);
    } finally {
      await other.close();
    }
  });

  it("names the days between principal phases by elongation", async () => {
    expect((await get("?date=2024-01-24")).body.phase.key).toBe("waxing_gibbous");
    expect((await get("?date=2024-01-27")).body.phase.key).toBe("waning_gibbous");
    expect((await get("?date=2024-01-14")).body.phase.key).toBe("waxing_crescent");
    expect((await get("?date=2024-01-08")).body.phase.key).toBe("waning_crescent");
  });

  it("names the day by its local date: the 2024-01-11 11:57 UT new moon is the 11th in Tokyo, not the 10th", async () => {
    expect((await get("?date=2024-01-11&tz=Asia/Tokyo")).body.phase.key).toBe("new_moon");
    expect((await get("?date=2024-01-10&tz=Asia/Tokyo")).body.phase.key).toBe("waning_crescent");
  });

  it("reads a date-time with offset as that instant and gives times in tz", async () => {
    const { body } = await get("?date=2024-01-25T18:00:00%2B01:00&tz=America/New_York&phases=12");
    expect(body.at).toBe("2024-01-25T12:00:00-05:00");
    expect(body.upcoming_phases).toHaveLength(12);
    expect(body.next_phase.time).toMatch(/-05:00$/);
    expect(body.events).toBeNull();
    expect(body.location).toBeNull();
  });

  it("gives null rise and set with the next ones when the Moon stays down (Svalbard, midsummer)", async () => {
    const { body } = await get("?date=2024-06-21&lat=78.22&lon=15.65");
    expect(body.tz).toBe("Arctic/Longyearbyen");
    expect(body.events.moonrise).toBeNull();
    expect(body.events.moonset).toBeNull();
    expect(Date.parse(body.events.next_moonrise ?? "")).toBeGreaterThan(Date.parse("2024-06-22T00:00:00+02:00"));
    expect(Date.parse(body.events.next_moonset ?? "")).toBeGreaterThan(Date.parse("2024-06-22T00:00:00+02:00"));
  });

  it("gives every rise and set of the day: Tromsø 2025 against the Astronomical Almanac's low-precision Moon", async () => {
    const [lat, lon] = [69.6492, 18.9553];
    let doubleDays = 0;
    for (let ms = Date.UTC(2025, 0, 1); ms < Date.UTC(2026, 0, 1); ms += 86_400_000) {
      const date = new Date(ms).toISOString().slice(0, 10);
      const { body } = await get(`?date=${date}&lat=${lat}&lon=${lon}`);
      // The reference's events whose local date (Europe/Oslo) is this day.
      const reference = moonCrossings(ms - 3 * 3_600_000, ms + 24 * 3_600_000, lat, lon).filter(
        (c) => DateTime.fromMillis(c.ms, { zone: "Europe/Oslo" }).toISODate() === date,
      );
      for (const [ours, rising] of [
        [body.events.moonrises, true],
        [body.events.moonsets, false],
      ] as const) {
        const theirs = reference.filter((c) => c.rising === rising).map((c) => c.ms);
        expect(ours.length, `${date} ${rising ? "rises" : "sets"}`).toBe(theirs.length);
        ours.forEach((t, i) => {
          expect(Math.abs(Date.parse(t) - (theirs[i] as number))).toBeLessThan(15 * 60_000);
        });
        // The single fields stay the first event, as before.
        expect(rising ? body.events.moonrise : body.events.moonset).toBe(ours[0] ?? null);
        if (ours.length > 1) doubleDays++;
      }
    }
    // Several days a year with two rises or two sets (the reference finds four in 2025).
    expect(doubleDays).toBeGreaterThanOrEqual(4);
  }, 120_000);

  it.each([
    ["?lat=91&lon=0", 'query parameter "lat" is invalid: must be between -90 and 90'],
    ["?lat=north&lon=0", 'query parameter "lat" is invalid: must be a decimal number of degrees'],
    ["?lat=10&lon=-180.5", 'query parameter "lon" is invalid: must be between -180 and 180'],
    ["?lat=51.5", 'query parameter "lon" is required'],
    ["?lon=0", 'query parameter "lat" is required'],
    [
      "?date=2024-02-30",
      'query parameter "date" is invalid: must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999',
    ],
    [
      "?date=yesterday",
      'query parameter "date" is invalid: must be a date YYYY-MM-DD or an ISO 8601 date-time, years 1000 to 2999',
    ],
    ["?tz=Mars/Olympus_Mons", 'query parameter "tz" is invalid: must be an IANA time zone such as Europe/London'],
    ["?tz=%2B01:00", 'query parameter "tz" is invalid: must be an IANA time zone such as Europe/London'],
    ["?phases=0", 'query parameter "phases" is invalid: must be between 1 and 12'],
    ["?phases=13", 'query parameter "phases" is invalid: must be between 1 and 12'],
    ["?phases=2.5", 'query parameter "phases" is invalid: must be a whole number'],
  ])("%s → 400 invalid_body naming the parameter", async (query, message) => {
    const res = await t.app.request(`/v1/moon${query}`);
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toBe(message);
  });

  it("is documented in /v1/openapi.json with its parameters and examples", async () => {
    const op = await documentedGet(t.app, "/v1/moon");
    expect(op.parameters.map((p) => p.name).sort()).toEqual(["date", "lat", "lon", "phases", "tz"]);
    expect(exampleOf<MoonResponseBody>(op, 200).phase.key).toBe("full_moon");
    expect(Object.keys(examplesOf(op, 400))).toContain("phases");
    expect(examplesOf(op, 429).demo).toMatchObject({
      error: { reason: "DEMO_HOURLY_LIMIT" },
    });
  });
});

describe("moonJson: the answer's bytes", () => {
  const zones = new TimeZones();
  const moon = new MoonCalculator(zones);
  const bodyOf = (ms: number, observer: { lat: number; lon: number } | null, phases: number): MoonResponseBody => {
    const date = new Date(ms).toISOString().slice(0, 10);
    const tz = resolveZone(undefined, observer?.lat, observer?.lon);
    const when = resolveWhen(date, tz, new Date(ms), zones);
    const { at, ...rest } = moon.report({ at: when.at, day: when.day, phases, ...(observer && { observer }) });
    return { at, date: when.day.date, tz, location: observer, ...rest, units: MOON_UNITS };
  };
  const same = (body: MoonResponseBody) => {
    expect(Buffer.from(moonJson(body)).toString("hex")).toBe(Buffer.from(JSON.stringify(body)).toString("hex"));
  };

  it("are JSON.stringify's UTF-8 on every day of a lunation (all eight phases)", () => {
    const seen = new Set<string>();
    for (let d = 0; d < 31; d++) {
      const body = bodyOf(Date.UTC(2025, 4, 1) + d * 86_400_000, { lat: 51.5, lon: -0.12 }, 4);
      seen.add(body.phase.key);
      same(body);
    }
    expect(seen.size).toBe(8);
  });

  it("are JSON.stringify's UTF-8 for random days, places and phase counts", () => {
    const place = fc.option(
      fc.record({
        lat: fc.double({ min: -89, max: 89, noNaN: true }),
        lon: fc.double({ min: -180, max: 180, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2100, 11, 31) }),
        place,
        fc.integer({ min: 1, max: 12 }),
        (ms, observer, phases) => {
          same(bodyOf(ms, observer, phases));
        },
      ),
      { numRuns: propertyRuns(500), seed: 71 },
    );
  });
});
