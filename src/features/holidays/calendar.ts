import Holidays, { type HolidaysTypes } from "date-holidays";
import { LRUCache } from "lru-cache";
import { DateTime } from "luxon";
import { HOLIDAY_OVERRIDES, type HolidayOverride } from "./overrides.js";

export type HolidayType = HolidaysTypes.HolidayType;

/**
 * What makes a date a day off in working-day arithmetic: `day_off` (the holidays marked so) or
 * holiday types, whole or part day (`public`, `bank`…).
 */
export type DayOffRule = "day_off" | HolidayType;

/**
 * Region names people use that are not ISO 3166-2 codes or the data's own names: gov.uk's
 * bank-holiday divisions. England and Wales share one calendar; ENG stands for both.
 */
const REGION_ALIASES: Readonly<Record<string, Record<string, string>>> = {
  GB: { "ENGLAND-AND-WALES": "ENG", "ENGLAND-WALES": "ENG" },
};
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

export interface Place {
  country: { code: string; name: string };
  region: { code: string; name: string } | null;
  tz: string;
  /** Old name of `tz`, kept for existing clients. */
  timezone: string;
  /** Weekend days from CLDR (Intl.Locale week info), e.g. ["saturday", "sunday"]. */
  weekend: string[];
}

export interface Holiday {
  date: string;
  /** Last day (inclusive); equal to `date` for one-day holidays. */
  end_date: string;
  name: string;
  local_name: string;
  type: HolidayType;
  substitute: boolean;
  /** Local time the holiday starts when it is only part of a day (e.g. "14:00"), else null. */
  starts_at: string | null;
  /**
   * A day off for most employees: a full-day public holiday, unless its source says most work
   * (e.g. the Netherlands' Good Friday). Bank-only and part days are not.
   */
  day_off: boolean;
  /** Why the day is typed or counted as it is, where that is not obvious; else null. */
  note: string | null;
  /** The statute or official source for an entry Almanac corrects or adds; else null. */
  source: string | null;
}

/** What an override adds to date-holidays' answer (custom attributes travel with the rule). */
interface OverrideAttributes {
  note?: string;
  source?: string;
  dayOff?: HolidayOverride["dayOff"];
}

export type PlaceLookup =
  | { ok: true; place: Place; calendar: Calendar }
  | { ok: false; missing: "country" | "region"; message: string };

/** ISO weekday numbers (1 = Monday) of the weekend in `country`, from CLDR. */
function weekendOf(country: string): number[] {
  const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & {
    weekInfo?: { weekend: number[] };
    getWeekInfo?: () => { weekend: number[] };
  };
  return (locale.getWeekInfo?.() ?? locale.weekInfo)?.weekend ?? [6, 7];
}

/** Public holidays and working days of one country (and optionally one region of it). */
export class Calendar {
  private readonly years = new LRUCache<number, Holiday[]>({ max: 16 });
  private readonly offDays = new LRUCache<string, Set<string>>({ max: 64 });
  readonly weekend: number[];

  /**
   * Two instances because `getHolidays(year, lang)` permanently prepends `lang` to the
   * instance's languages (date-holidays-parser 3.x mutates its own list).
   */
  constructor(
    private readonly english: Holidays,
    private readonly local: Holidays,
    readonly timezone: string,
    country: string,
  ) {
    this.weekend = weekendOf(country);
  }

  holidays(year: number): Holiday[] {
    let list = this.years.get(year);
    if (!list) {
      list = this.build(year);
      this.years.set(year, list);
    }
    return list;
  }

  private build(year: number): Holiday[] {
    const english = this.english.getHolidays(year);
    const local = this.local.getHolidays(year);
    return english.map((h: HolidaysTypes.Holiday & OverrideAttributes, i) => {
      const date = h.date.slice(0, 10);
      const fullDays = Math.round((h.end.getTime() - h.start.getTime()) / 86_400_000);
      const startsAt = h.date.slice(11, 16);
      const last = DateTime.fromISO(date).plus({ days: Math.max(1, fullDays) - 1 });
      return {
        date,
        end_date: last.toISODate() ?? date,
        name: h.name,
        local_name: local[i]?.rule === h.rule ? (local[i]?.name ?? h.name) : h.name,
        type: h.type,
        substitute: h.substitute === true,
        starts_at: startsAt === "00:00" ? null : startsAt,
        day_off: h.type === "public" && startsAt === "00:00" && fullDays >= 1 && dayOffIn(year, h.dayOff),
        note: h.note ?? null,
        source: h.source ?? null,
      };
    });
  }

  /** Holidays touching `date` (YYYY-MM-DD). */
  holidaysOn(date: string): Holiday[] {
    const year = Number(date.slice(0, 4));
    return [...this.holidays(year - 1), ...this.holidays(year)].filter((h) => h.date <= date && date <= h.end_date);
  }

  isWeekend(date: string): boolean {
    return this.weekend.includes(isoWeekday(date));
  }

  isWorkingDay(date: string, count: readonly DayOffRule[] = ["day_off"]): boolean {
    return !this.isWeekend(date) && !this.daysOff(Number(date.slice(0, 4)), count).has(date);
  }

  /** Moves `n` working days from `date` (negative: backwards); `n = 0` returns `date`. */
  addWorkingDays(date: string, n: number, count: readonly DayOffRule[] = ["day_off"]): string {
    let ms = Date.parse(`${date}T00:00:00Z`);
    const step = n < 0 ? -86_400_000 : 86_400_000;
    for (let left = Math.abs(n); left > 0; ) {
      ms += step;
      if (this.isWorkingDay(new Date(ms).toISOString().slice(0, 10), count)) left--;
    }
    return new Date(ms).toISOString().slice(0, 10);
  }

  /** Every date of `year` (and spill-over from multi-day holidays) that `count` makes a day off. */
  private daysOff(year: number, count: readonly DayOffRule[]): Set<string> {
    const key = `${year}:${[...count].sort().join(",")}`;
    let days = this.offDays.get(key);
    if (!days) {
      days = new Set();
      // The previous year's list too: a holiday may run into this one (e.g. 31 Dec to 2 Jan).
      for (const h of [...this.holidays(year - 1), ...this.holidays(year)]) {
        if (!((h.day_off && count.includes("day_off")) || count.includes(h.type))) continue;
        const last = Date.parse(`${h.end_date}T00:00:00Z`);
        for (let ms = Date.parse(`${h.date}T00:00:00Z`); ms <= last; ms += 86_400_000) {
          const d = new Date(ms).toISOString().slice(0, 10);
          if (d.startsWith(String(year))) days.add(d);
        }
      }
      this.offDays.set(key, days);
    }
    return days;
  }
}

function dayOffIn(year: number, rule: HolidayOverride["dayOff"]): boolean {
  return typeof rule === "number" ? year % rule === 0 : rule !== false;
}

/** Applies the overrides for one calendar ("" region: the national set). */
function applyOverrides(holidays: Holidays[], country: string, region: string): void {
  for (const o of HOLIDAY_OVERRIDES) {
    if (o.country !== country || o.region !== region) continue;
    const attributes: OverrideAttributes = { note: o.note, source: o.source, dayOff: o.dayOff };
    for (const hd of holidays) {
      // `false` unsets a rule (date-holidays' documented API; its types only admit options).
      if (o.replaces) hd.setHoliday(o.replaces, false as never);
      hd.setHoliday(o.rule, { name: o.name, type: o.type, substitute: /\bif\b/.test(o.rule), ...attributes });
    }
  }
}

/** ISO weekday, 1 = Monday … 7 = Sunday, of a YYYY-MM-DD date. */
function isoWeekday(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay() || 7;
}

/** Builds calendars on demand and keeps the recently used ones (one per app, no globals). */
export class HolidayCalendars {
  private readonly registry = new Holidays();
  private readonly calendars = new LRUCache<string, Calendar>({ max: 64 });
  /**
   * Country names and each country's region names, read from the registry once: date-holidays
   * builds them anew on every call, which was most of an uncached holidays answer's work.
   */
  private countries?: Record<string, string>;
  private readonly regions = new Map<string, Record<string, string>>();

  private regionsOf(country: string): Record<string, string> {
    let states = this.regions.get(country);
    if (states === undefined) {
      states = this.registry.getStates(country, "en") ?? {};
      this.regions.set(country, states);
    }
    return states;
  }

  lookup(countryCode: string, regionCode?: string): PlaceLookup {
    const country = countryCode.toUpperCase();
    this.countries ??= this.registry.getCountries("en");
    const countryName = this.countries[country];
    if (!countryName) {
      return { ok: false, missing: "country", message: `No holiday data for country "${countryCode}".` };
    }
    let region: Place["region"] = null;
    if (regionCode !== undefined) {
      const states = this.regionsOf(country);
      const code = regionOf(country, regionCode, states);
      const name = code === undefined ? undefined : states[code];
      if (code === undefined || !name) {
        return { ok: false, missing: "region", message: `No region "${regionCode}" in country ${country}.` };
      }
      region = { code, name };
    }
    const key = `${country}-${region?.code ?? ""}`;
    let calendar = this.calendars.get(key);
    if (!calendar) {
      const make = (opts: HolidaysTypes.Options) =>
        region ? new Holidays(country, region.code, opts) : new Holidays(country, opts);
      const local = make({});
      const english = make({ languages: ["en"] });
      applyOverrides([english, local], country, region?.code ?? "");
      calendar = new Calendar(english, local, local.getTimezones()[0] ?? "UTC", country);
      this.calendars.set(key, calendar);
    }
    const weekend = calendar.weekend.map((d) => WEEKDAYS[d - 1] as string);
    return {
      ok: true,
      calendar,
      place: {
        country: { code: country, name: countryName },
        region,
        tz: calendar.timezone,
        timezone: calendar.timezone,
        weekend,
      },
    };
  }
}

/**
 * A region's code from what a caller wrote: `SCT`, `GB-SCT`, the region's name in any case with
 * hyphens or spaces (`scotland`, `northern-ireland`), or an alias such as `england-and-wales`.
 */
function regionOf(country: string, input: string, states: Record<string, string>): string | undefined {
  const upper = input
    .trim()
    .toUpperCase()
    .replace(new RegExp(`^${country}-`), "");
  if (upper in states) return upper;
  const alias = REGION_ALIASES[country]?.[upper];
  if (alias) return alias;
  const wanted = upper.replace(/[\s_-]+/g, " ");
  return Object.keys(states).find((code) => states[code]?.toUpperCase().replace(/[\s_-]+/g, " ") === wanted);
}
