import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { DateTime } from "luxon";
import type { AppDeps } from "../../app-deps.js";
import { ApiError } from "../../http/errors.js";
import { taggedJson } from "../../http/http-cache.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import { errorResponse } from "../shared/responses.js";
import type { HolidayCalendars } from "./calendar.js";
import { HolidaysQuery, HolidaysResponse, WorkingDaysQuery, WorkingDaysResponse } from "./schema.js";

const GB = { code: "GB", name: "United Kingdom" };
const ENG = { code: "ENG", name: "England" };
const christmas = {
  date: "2024-12-25",
  end_date: "2024-12-25",
  name: "Christmas Day",
  local_name: "Christmas Day",
  type: "public" as const,
  substitute: false,
  starts_at: null,
  day_off: true,
  note: null,
  source: null,
};

const notFound = errorResponse("Unknown country, or a region the country does not have.", {
  country: { code: "not_found", message: 'No holiday data for country "XX".' },
  region: { code: "not_found", message: 'No region "ZZZ" in country GB.' },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/holidays",
  tags: ["Lookups"],
  summary: "Public holidays of a country (and region) in a year",
  description:
    "Offline data from date-holidays (about 200 countries and their regions). Names in English where " +
    "available, with the local name. `day_off` marks the days most employees have off (full-day public " +
    "holidays, less official ones most people work); bank-only and part-day holidays are listed with " +
    "`types=bank`. `note` and `source` explain entries Almanac corrects or adds (Canada's federal set, the " +
    "Netherlands' Good Friday and Liberation Day…).",
  request: { query: HolidaysQuery },
  responses: {
    200: {
      description: "The holidays, sorted by date.",
      content: {
        "application/json": {
          schema: HolidaysResponse,
          example: {
            country: GB,
            region: ENG,
            tz: "Europe/London",
            timezone: "Europe/London",
            weekend: ["saturday", "sunday"],
            year: 2024,
            types: ["public"],
            holidays: [
              { ...christmas },
              {
                ...christmas,
                date: "2024-12-26",
                end_date: "2024-12-26",
                name: "Boxing Day",
                local_name: "Boxing Day",
              },
            ],
          },
        },
      },
    },
    400: errorResponse("A query parameter is missing or invalid; the message names it.", {
      country_missing: { code: "invalid_body", message: 'query parameter "country" is required' },
      year: { code: "invalid_body", message: 'query parameter "year" is invalid: must be between 1900 and 2199' },
    }),
    404: notFound,
  },
});

const workingDaysRoute = createRoute({
  method: "get",
  path: "/v1/holidays/working-days",
  tags: ["Lookups"],
  summary: "Is a date a working day, and what date is N working days later",
  description:
    "A working day is neither a weekend day of the country (CLDR week data) nor a day off. By default a day " +
    "off is a holiday marked `day_off` (a full-day public holiday most employees have off); bank holidays, " +
    "part days and official holidays most people work are working days. `count` changes that: " +
    "`count=public,bank` also stops at New South Wales' Bank Holiday and Germany's 24 December. `add` counts " +
    "working days from `date` (excluded), forwards or, when negative, backwards.",
  request: { query: WorkingDaysQuery },
  responses: {
    200: {
      description: "The verdict for `date`, and the date `add` working days away.",
      content: {
        "application/json": {
          schema: WorkingDaysResponse,
          example: {
            country: GB,
            region: ENG,
            tz: "Europe/London",
            timezone: "Europe/London",
            weekend: ["saturday", "sunday"],
            date: "2024-12-25",
            weekday: "wednesday",
            is_weekend: false,
            is_working_day: false,
            holidays: [christmas],
            add: 3,
            count: ["day_off"],
            result: "2024-12-31",
          },
        },
      },
    },
    400: errorResponse("A query parameter is missing or invalid; the message names it.", {
      date: {
        code: "invalid_body",
        message: 'query parameter "date" is invalid: must be a date YYYY-MM-DD between 1900 and 2199',
      },
      add: { code: "invalid_body", message: 'query parameter "add" is invalid: must be a whole number' },
      count: {
        code: "invalid_body",
        message:
          'query parameter "count" is invalid: must be a comma-separated list of day_off, public, bank, optional, school, observance',
      },
    }),
    404: notFound,
  },
});

/** `GET /v1/holidays` and `GET /v1/holidays/working-days`. */
export function registerHolidays(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "now">): void {
  // date-holidays and its data are loaded on the first holidays request, not at start-up
  // (about a quarter of a second and 15 MB that most processes never need).
  let calendars: Promise<HolidayCalendars> | undefined;
  const find = async (country: string, region?: string) => {
    calendars ??= import("./calendar.js").then((m) => new m.HolidayCalendars());
    const found = (await calendars).lookup(country, region);
    if (!found.ok) throw new ApiError("not_found", found.message);
    return found;
  };

  openapiRoute(app, listRoute, async (c) => {
    const query = c.req.valid("query");
    const { place, calendar } = await find(query.country, query.region);
    const year = query.year ?? DateTime.fromJSDate(deps.now(), { zone: place.timezone }).year;
    const types = query.types ?? ["public"];
    const holidays = calendar.holidays(year).filter((h) => types.includes(h.type));
    return taggedJson(c, { ...place, year, types, holidays });
  });

  openapiRoute(app, workingDaysRoute, async (c) => {
    const query = c.req.valid("query");
    const { place, calendar } = await find(query.country, query.region);
    const date = query.date ?? DateTime.fromJSDate(deps.now(), { zone: place.timezone }).toISODate() ?? "";
    const count = query.count ?? ["day_off"];
    return taggedJson(c, {
      ...place,
      date,
      weekday: DateTime.fromISO(date).setLocale("en").weekdayLong?.toLowerCase() ?? "",
      is_weekend: calendar.isWeekend(date),
      is_working_day: calendar.isWorkingDay(date, count),
      holidays: calendar.holidaysOn(date),
      add: query.add ?? null,
      count,
      result: query.add === undefined ? null : calendar.addWorkingDays(date, query.add, count),
    });
  });
}
