import type { z } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    ["?country=GB&date=24/12/2024", 'query parameter "date" is invalid: must be a date YYYY-MM-DD'],
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
  expect(days.parameters.map((p) => p.name).sort()).toEqual(["add", "country", "date", "region"]);
  expect(exampleOf<Body>(list, 200).holidays.length).toBeGreaterThan(0);
  expect(exampleOf<Body>(days, 200).is_working_day).toBe(false);
  expect(Object.keys(examplesOf(list, 404))).toEqual(["country", "region"]);
});
