import type { z } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { errorOf, type TestApp, testApp } from "../../../test/helpers/app.js";
import { documentedGet, exampleOf, examplesOf } from "../../../test/helpers/openapi.js";
import type { HolidaySchema, HolidaysResponse, WorkingDaysResponse } from "./schema.js";

type Body = z.infer<typeof HolidaysResponse> & z.infer<typeof WorkingDaysResponse>;
type Holiday = z.infer<typeof HolidaySchema>;

let t: TestApp;
beforeAll(async () => {
  // A fixed clock, so defaults ("this year", "today") are checkable.
  t = await testApp({ DEMO_HOURLY_LIMIT: "100000" }, () => ({ now: () => new Date("2025-12-31T23:30:00Z") }));
});
afterAll(() => t.close());

const get = async (path: string) => {
  const res = await t.app.request(path);
  return { res, body: (await res.json()) as Body };
};

describe("GET /v1/holidays", () => {
  // gov.uk/bank-holidays, England and Wales 2024.
  it("lists England's 2024 bank holidays", async () => {
    const { res, body } = await get("/v1/holidays?country=gb&region=GB-ENG&year=2024");
    expect(res.status).toBe(200);
    expect(body.country).toEqual({ code: "GB", name: "United Kingdom" });
    expect(body.region).toEqual({ code: "ENG", name: "England" });
    expect(body.timezone).toBe("Europe/London");
    expect(body.weekend).toEqual(["saturday", "sunday"]);
    expect(body.types).toEqual(["public"]);
    expect(body.holidays.map((h: Holiday) => h.date)).toEqual([
      "2024-01-01",
      "2024-03-29",
      "2024-04-01",
      "2024-05-06",
      "2024-05-27",
      "2024-08-26",
      "2024-12-25",
      "2024-12-26",
    ]);
    expect(body.holidays[0]).toEqual({
      date: "2024-01-01",
      end_date: "2024-01-01",
      name: "New Year's Day",
      local_name: "New Year's Day",
      type: "public",
      substitute: false,
      starts_at: null,
      day_off: true,
      note: null,
      source: null,
    });
  });

  // gov.uk/bank-holidays, Scotland 2024: 2 January, first Monday of August, St Andrew's substitute day.
  it("a region changes the list: Scotland 2024", async () => {
    const { body } = await get("/v1/holidays?country=GB&region=sct&year=2024");
    const dates = body.holidays.map((h: Holiday) => h.date);
    expect(dates).toEqual(expect.arrayContaining(["2024-01-02", "2024-08-05", "2024-12-02"]));
    expect(dates).not.toContain("2024-04-01");
    expect(body.holidays.find((h: Holiday) => h.date === "2024-12-02")?.substitute).toBe(true);
  });

  it("gives English names with the local name, and other types on request", async () => {
    const { body } = await get("/v1/holidays?country=DE&region=BY&year=2024&types=public,observance");
    const epiphany = body.holidays.find((h: Holiday) => h.date === "2024-01-06");
    expect(epiphany).toMatchObject({ name: "Epiphany", local_name: "Heilige Drei Könige", type: "public" });
    expect(body.holidays.some((h: Holiday) => h.type === "observance")).toBe(true);
    expect(body.types).toEqual(["public", "observance"]);
  });

  it("defaults to the current year in the country's zone", async () => {
    // 2025-12-31T23:30Z is already 2026 in Berlin.
    expect((await get("/v1/holidays?country=DE")).body.year).toBe(2026);
    expect((await get("/v1/holidays?country=GB")).body.year).toBe(2025);
  });

  it.each([
    ["/v1/holidays", 'query parameter "country" is required'],
    [
      "/v1/holidays?country=GBR",
      'query parameter "country" is invalid: must be an ISO 3166-1 alpha-2 country code such as GB',
    ],
    [
      "/v1/holidays?country=GB&region=Eng%2Fland",
      'query parameter "region" is invalid: must be a subdivision code such as ENG or GB-ENG, or its name',
    ],
    ["/v1/holidays?country=GB&year=1899", 'query parameter "year" is invalid: must be between 1900 and 2199'],
    ["/v1/holidays?country=GB&year=twenty", 'query parameter "year" is invalid: must be a whole number'],
    [
      "/v1/holidays?country=GB&types=public,holy",
      'query parameter "types" is invalid: must be a comma-separated list of public, bank, optional, school, observance',
    ],
  ])("%s → 400 invalid_body naming the parameter", async (path, message) => {
    const res = await t.app.request(path);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({ code: "invalid_body", message });
  });

  it("Scotland's one-off bank holiday of Monday 15 June 2026 is listed and is not a working day", async () => {
    const { body } = await get("/v1/holidays?country=GB&region=SCT&year=2026");
    expect(body.holidays.find((h: Holiday) => h.date === "2026-06-15")).toMatchObject({
      type: "public",
      day_off: true,
      name: "Additional bank holiday (FIFA World Cup)",
    });
    const day = await get("/v1/holidays/working-days?country=GB&region=scotland&date=2026-06-15");
    expect(day.body.is_working_day).toBe(false);
    // Working-day arithmetic steps over it: Friday 12 June + 1 is Tuesday 16 June in Scotland...
    const next = await get("/v1/holidays/working-days?country=GB&region=SCT&date=2026-06-12&add=1");
    expect(next.body.result).toBe("2026-06-16");
    // ...and Monday 15 June in England, which does not have it.
    const eng = await get("/v1/holidays/working-days?country=GB&region=ENG&date=2026-06-12&add=1");
    expect(eng.body.result).toBe("2026-06-15");
    // Only that year.
    const later = await get("/v1/holidays?country=GB&region=SCT&year=2027");
    expect(later.body.holidays.map((h: Holiday) => h.date)).not.toContain("2027-06-15");
  });

  it("bank-only and part-day holidays are not listed by default and are never days off", async () => {
    const de = await get("/v1/holidays?country=DE&year=2026");
    expect(de.body.holidays.map((h: Holiday) => h.date)).not.toContain("2026-12-24");
    const all = await get("/v1/holidays?country=DE&year=2026&types=public,bank");
    expect(all.body.holidays.find((h: Holiday) => h.date === "2026-12-24")).toMatchObject({
      type: "bank",
      starts_at: "14:00",
      day_off: false,
    });
    const eve = await get("/v1/holidays/working-days?country=DE&date=2026-12-24");
    expect(eve.body.is_working_day).toBe(true);
    // New South Wales' Bank Holiday (first Monday of August): banks close, everyone else works.
    const nsw = await get("/v1/holidays?country=AU&region=NSW&year=2026&types=bank");
    expect(nsw.body.holidays).toEqual([expect.objectContaining({ date: "2026-08-03", type: "bank", day_off: false })]);
    const day = await get("/v1/holidays/working-days?country=AU&region=NSW&date=2026-08-03");
    expect(day.body.is_working_day).toBe(true);
  });

  it.each([
    ["england-and-wales", "ENG"],
    ["scotland", "SCT"],
    ["Northern-Ireland", "NIR"],
    ["northern ireland", "NIR"],
    ["GB-WLS", "WLS"],
  ])("region %j is accepted as %s", async (alias, code) => {
    const { res, body } = await get(`/v1/holidays?country=GB&region=${encodeURIComponent(alias)}&year=2024`);
    expect(res.status).toBe(200);
    expect(body.region?.code).toBe(code);
  });

  it.each([
    ["/v1/holidays?country=XX", 'No holiday data for country "XX".'],
    ["/v1/holidays?country=GB&region=ZZZ", 'No region "ZZZ" in country GB.'],
    ["/v1/holidays/working-days?country=QQ&date=2024-01-01", 'No holiday data for country "QQ".'],
    ["/v1/holidays/working-days?country=DE&region=XY", 'No region "XY" in country DE.'],
  ])("%s → 404 not_found", async (path, message) => {
    const res = await t.app.request(path);
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error).toMatchObject({ code: "not_found", message });
  });
});

describe("GET /v1/holidays/working-days", () => {
  it("Christmas Day is not a working day; 3 working days after Christmas Eve is 31 December", async () => {
    const xmas = await get("/v1/holidays/working-days?country=GB&region=ENG&date=2024-12-25");
    expect(xmas.res.status).toBe(200);
    expect(xmas.body).toMatchObject({
      date: "2024-12-25",
      weekday: "wednesday",
      is_weekend: false,
      is_working_day: false,
    });
    expect(xmas.body.holidays.map((h: Holiday) => h.name)).toEqual(["Christmas Day"]);
    expect(xmas.body.result).toBeNull();

    const eve = await get("/v1/holidays/working-days?country=GB&region=ENG&date=2024-12-24&add=3");
    expect(eve.body).toMatchObject({ is_working_day: true, add: 3, result: "2024-12-31" });
  });

  it("counts backwards, and add=0 returns the date", async () => {
    const back = await get("/v1/holidays/working-days?country=GB&date=2024-12-27&add=-2");
    expect(back.body.result).toBe("2024-12-23");
    expect((await get("/v1/holidays/working-days?country=GB&date=2024-12-28&add=0")).body.result).toBe("2024-12-28");
  });

  it("regions differ: 2 January 2024 is a holiday in Scotland, a working day in England", async () => {
    const sct = await get("/v1/holidays/working-days?country=GB&region=SCT&date=2024-01-02");
    const eng = await get("/v1/holidays/working-days?country=GB&region=ENG&date=2024-01-02");
    expect(sct.body.is_working_day).toBe(false);
    expect(eng.body.is_working_day).toBe(true);
  });

  it("uses the country's weekend (CLDR): Friday is weekend in Israel, Saturday a working day in India", async () => {
    const il = await get("/v1/holidays/working-days?country=IL&date=2024-06-07");
    expect(il.body).toMatchObject({ weekday: "friday", is_weekend: true, is_working_day: false });
    expect(il.body.weekend).toEqual(["friday", "saturday"]);
    const sunday = await get("/v1/holidays/working-days?country=IL&date=2024-06-09");
    expect(sunday.body.is_working_day).toBe(true);
    const india = await get("/v1/holidays/working-days?country=IN&date=2024-06-08");
    expect(india.body).toMatchObject({ weekday: "saturday", is_weekend: false });
  });

  it("US: Independence Day 2026 falls on a Saturday; Friday 3 July is the observed day off", async () => {
    const { body } = await get("/v1/holidays/working-days?country=US&date=2026-07-03");
    expect(body.is_working_day).toBe(false);
    expect(body.holidays[0]).toMatchObject({ substitute: true, day_off: true });
  });

  it("defaults the date to today in the country's zone", async () => {
    expect((await get("/v1/holidays/working-days?country=DE")).body.date).toBe("2026-01-01");
    expect((await get("/v1/holidays/working-days?country=US")).body.date).toBe("2025-12-31");
  });

  it.each([
    ["?date=2024-12-24", 'query parameter "country" is required'],
    [
      "?country=GB&date=24/12/2024",
      'query parameter "date" is invalid: must be a date YYYY-MM-DD between 1900 and 2199',
    ],
    [
      "?country=GB&date=2023-02-29",
      'query parameter "date" is invalid: must be a real calendar date between 1900 and 2199',
    ],
    ["?country=GB&add=1.5", 'query parameter "add" is invalid: must be a whole number'],
    ["?country=GB&add=1001", 'query parameter "add" is invalid: must be between -1000 and 1000'],
  ])("%s → 400 invalid_body naming the parameter", async (query, message) => {
    const res = await t.app.request(`/v1/holidays/working-days${query}`);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({ code: "invalid_body", message });
  });
});

it("both routes are documented in /v1/openapi.json with parameters and examples", async () => {
  const list = await documentedGet(t.app, "/v1/holidays");
  const days = await documentedGet(t.app, "/v1/holidays/working-days");
  expect(list.parameters.map((p) => p.name).sort()).toEqual(["country", "region", "types", "year"]);
  expect(days.parameters.map((p) => p.name).sort()).toEqual(["add", "count", "country", "date", "region"]);
  expect(exampleOf<Body>(list, 200).holidays.length).toBeGreaterThan(0);
  expect(exampleOf<Body>(days, 200).is_working_day).toBe(false);
  expect(Object.keys(examplesOf(list, 404))).toEqual(["country", "region"]);
});

// Canada Labour Code (R.S.C. 1985, c. L-2) s. 166: the federal general holidays; s. 193(2): when New
// Year's Day, Canada Day, Remembrance Day, Christmas Day or Boxing Day falls on a non-working Saturday
// or Sunday, a holiday with pay on the working day before or after (federal practice: the Monday,
// and the Tuesday for the second). Holidays Act s. 2: a Sunday 1 July is kept on Monday 2 July.
describe("Canada: the national set is the federal one (Canada Labour Code)", () => {
  it("lists the ten general holidays of s. 166, each with its source", async () => {
    const { body } = await get("/v1/holidays?country=CA&year=2027");
    const byName = Object.fromEntries(body.holidays.filter((h) => !h.substitute).map((h) => [h.name, h.date]));
    expect(byName).toEqual({
      "New Year's Day": "2027-01-01",
      "Good Friday": "2027-03-26",
      "Victoria Day": "2027-05-24",
      "Canada Day": "2027-07-01",
      "Labour Day": "2027-09-06",
      "National Day for Truth and Reconciliation": "2027-09-30",
      Thanksgiving: "2027-10-11",
      "Remembrance Day": "2027-11-11",
      "Christmas Day": "2027-12-25",
      "Boxing Day": "2027-12-26",
    });
    for (const h of body.holidays) expect(h.source).toMatch(/Canada Labour Code/);
  });

  it("Christmas 2027 on a Saturday and Boxing Day on a Sunday are observed Monday 27 and Tuesday 28 December", async () => {
    const { body } = await get("/v1/holidays?country=CA&year=2027");
    const observed = body.holidays.filter((h) => h.substitute).map((h) => [h.date, h.day_off]);
    expect(observed).toEqual([
      ["2027-12-27", true],
      ["2027-12-28", true],
    ]);
    const after = await get("/v1/holidays/working-days?country=CA&date=2027-12-24&add=1");
    expect(after.body.result).toBe("2027-12-29");
  });

  it("Canada Day on Sunday 1 July 2029 is kept on Monday 2 July; Remembrance Day 2028 (Saturday) on Monday 13 November", async () => {
    expect((await get("/v1/holidays/working-days?country=CA&date=2029-07-02")).body.is_working_day).toBe(false);
    expect((await get("/v1/holidays/working-days?country=CA&date=2028-11-13")).body.is_working_day).toBe(false);
  });

  it("a province keeps its own statute: Ontario has no Remembrance Day, and Easter Monday is not an ESA holiday", async () => {
    const { body } = await get("/v1/holidays?country=CA&region=ON&year=2027");
    const names = body.holidays.map((h) => h.name);
    expect(names).toContain("Family Day");
    expect(names).not.toContain("Remembrance Day");
    expect(names).not.toContain("Easter Monday");
    const easter = await get("/v1/holidays/working-days?country=CA&region=ON&date=2027-03-29");
    expect(easter.body.is_working_day).toBe(true);
    expect(easter.body.holidays[0]).toMatchObject({ type: "optional", day_off: false });
    expect(easter.body.holidays[0]?.source).toMatch(/Employment Standards Act/);
  });

  it("Quebec: Good Friday or Easter Monday at the employer's option (Act respecting labour standards s. 60), said in a note", async () => {
    const { body } = await get("/v1/holidays?country=CA&region=QC&year=2027&types=public,optional");
    const easter = body.holidays.filter((h) => h.date === "2027-03-26" || h.date === "2027-03-29");
    expect(easter.map((h) => [h.date, h.type, h.day_off])).toEqual([
      ["2027-03-26", "public", true],
      ["2027-03-29", "optional", false],
    ]);
    for (const h of easter) expect(h.note).toMatch(/employer's option/);
  });
});

// British Columbia's Employment Standards Act made 30 September a statutory holiday from 2023;
// Ontario's Employment Standards Act does not list it.
it("National Day for Truth and Reconciliation: federal since 2021, British Columbia since 2023, not Ontario", async () => {
  const off = async (query: string) => !(await get(`/v1/holidays/working-days?${query}`)).body.is_working_day;
  expect(await off("country=CA&date=2021-09-30")).toBe(true);
  expect(await off("country=CA&region=BC&date=2022-09-30")).toBe(false);
  expect(await off("country=CA&region=BC&date=2027-09-30")).toBe(true);
  expect(await off("country=CA&region=ON&date=2027-09-30")).toBe(false);
});

// Rijksoverheid: Good Friday and Liberation Day are official holidays; no law makes any holiday a
// day off; most employers do not give Good Friday off; many cao's give 5 May off every fifth year.
describe("Netherlands: Good Friday and Liberation Day", () => {
  it("Good Friday is an official (public) holiday that is not a day off for most, with a note and a source", async () => {
    const { body } = await get("/v1/holidays?country=NL&year=2026");
    const goodFriday = body.holidays.find((h) => h.date === "2026-04-03");
    expect(goodFriday).toMatchObject({
      name: "Good Friday",
      local_name: "Goede Vrijdag",
      type: "public",
      day_off: false,
    });
    expect(goodFriday?.note).toMatch(/cao/);
    expect(goodFriday?.source).toMatch(/Rijksoverheid/);
    expect((await get("/v1/holidays/working-days?country=NL&date=2026-04-03")).body.is_working_day).toBe(true);
    expect((await get("/v1/holidays/working-days?country=NL&date=2026-04-03&count=public")).body.is_working_day).toBe(
      false,
    );
  });

  it("Liberation Day is a public holiday, a day off in lustrum years (2025, 2030) and not in between", async () => {
    for (const [year, off] of [
      [2025, true],
      [2026, false],
      [2030, true],
    ] as const) {
      const { body } = await get(`/v1/holidays?country=NL&year=${year}`);
      const day = body.holidays.find((h) => h.date === `${year}-05-05`);
      expect(day).toMatchObject({ name: "Liberation Day", type: "public", day_off: off });
      expect(day?.source).toMatch(/Rijksoverheid/);
    }
  });
});

describe("working days: the caller chooses what counts as a day off", () => {
  it.each([
    ["AU&region=NSW", "2026-08-03", "New South Wales' Bank Holiday"],
    ["JP", "2026-01-02", "Japan's 2 January bank holiday"],
    ["DE", "2026-12-24", "Germany's Christmas Eve (from 14:00)"],
    ["IE", "2026-04-03", "Ireland's Good Friday (banks close)"],
  ])("%s %s (%s): a working day by default, a day off with count=public,bank", async (place, date) => {
    const plain = await get(`/v1/holidays/working-days?country=${place}&date=${date}`);
    expect(plain.body).toMatchObject({ is_working_day: true, count: ["day_off"] });
    expect(plain.body.holidays[0]?.type).toBe("bank");
    const banks = await get(`/v1/holidays/working-days?country=${place}&date=${date}&count=public,bank`);
    expect(banks.body).toMatchObject({ is_working_day: false, count: ["public", "bank"] });
  });

  it("add steps over what count names: NSW, Friday 31 July 2026 + 1", async () => {
    const plain = await get("/v1/holidays/working-days?country=AU&region=NSW&date=2026-07-31&add=1");
    expect(plain.body.result).toBe("2026-08-03");
    const banks = await get("/v1/holidays/working-days?country=AU&region=NSW&date=2026-07-31&add=1&count=public,bank");
    expect(banks.body.result).toBe("2026-08-04");
  });

  it("rejects an unknown word in count", async () => {
    const res = await t.app.request("/v1/holidays/working-days?country=GB&count=public,holy");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({
      code: "invalid_body",
      message:
        'query parameter "count" is invalid: must be a comma-separated list of day_off, public, bank, optional, school, observance',
    });
  });
});

describe("HolidayCalendars: the registry's lists", () => {
  it("are read once per instance, whatever the lookups (date-holidays builds them anew on every call)", async () => {
    const { HolidayCalendars } = await import("./calendar.js");
    const { default: Holidays } = await import("date-holidays");
    const countries = vi.spyOn(Holidays.prototype, "getCountries");
    const states = vi.spyOn(Holidays.prototype, "getStates");
    try {
      const calendars = new HolidayCalendars();
      const first = calendars.lookup("GB", "SCT");
      for (const [country, region] of [
        ["gb", "scotland"],
        ["GB", undefined],
        ["DE", "BY"],
        ["XX", undefined],
        ["GB", "SCT"],
      ])
        calendars.lookup(country as string, region);
      expect(first).toMatchObject({
        ok: true,
        place: { country: { code: "GB", name: "United Kingdom" }, region: { code: "SCT" } },
      });
      expect(calendars.lookup("XX")).toMatchObject({ ok: false, missing: "country" });
      expect(calendars.lookup("GB", "Atlantis")).toMatchObject({ ok: false, missing: "region" });
      expect(countries).toHaveBeenCalledTimes(1);
      expect(states).toHaveBeenCalledTimes(2); // GB, DE
    } finally {
      countries.mockRestore();
      states.mockRestore();
    }
  });
});
