import Holidays, { type HolidaysTypes } from "date-holidays";
import { LRUCache } from "lru-cache";
import { DateTime } from "luxon";

export type HolidayType = HolidaysTypes.HolidayType;

/** Holiday types on which offices are closed (date-holidays: "bank: banks and offices are closed"). */
const DAY_OFF_TYPES: ReadonlySet<HolidayType> = new Set(["public", "bank"]);
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

export interface Place {
  country: { code: string; name: string };
  region: { code: string; name: string } | null;
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
  /** A full day on which offices close (public or bank holiday, not a half day). */
  day_off: boolean;
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
  private readonly offDays = new LRUCache<number, Set<string>>({ max: 16 });
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
    return english.map((h, i) => {
      const date = h.date.slice(0, 10);
      const fullDays = Math.round((h.end.getTime() - h.start.getTime()) / 86_400_000);
      const startsAtMidnight = h.date.slice(11, 19) === "00:00:00";
      const last = DateTime.fromISO(date).plus({ days: Math.max(1, fullDays) - 1 });
      return {
        date,
        end_date: last.toISODate() ?? date,
        name: h.name,
        local_name: local[i]?.rule === h.rule ? (local[i]?.name ?? h.name) : h.name,
        type: h.type,
        substitute: h.substitute === true,
        day_off: DAY_OFF_TYPES.has(h.type) && startsAtMidnight && fullDays >= 1,
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

  isWorkingDay(date: string): boolean {
    return !this.isWeekend(date) && !this.daysOff(Number(date.slice(0, 4))).has(date);
  }

  /** Moves `n` working days from `date` (negative: backwards); `n = 0` returns `date`. */
  addWorkingDays(date: string, n: number): string {
    let ms = Date.parse(`${date}T00:00:00Z`);
    const step = n < 0 ? -86_400_000 : 86_400_000;
    for (let left = Math.abs(n); left > 0; ) {
      ms += step;
      if (this.isWorkingDay(new Date(ms).toISOString().slice(0, 10))) left--;
    }
    return new Date(ms).toISOString().slice(0, 10);
  }

  /** Every date of `year` (and spill-over from multi-day holidays) on which offices close. */
  private daysOff(year: number): Set<string> {
    let days = this.offDays.get(year);
    if (!days) {
      days = new Set();
      // The previous year's list too: a holiday may run into this one (e.g. 31 Dec to 2 Jan).
      for (const h of [...this.holidays(year - 1), ...this.holidays(year)]) {
        if (!h.day_off) continue;
        const last = Date.parse(`${h.end_date}T00:00:00Z`);
        for (let ms = Date.parse(`${h.date}T00:00:00Z`); ms <= last; ms += 86_400_000) {
          const d = new Date(ms).toISOString().slice(0, 10);
          if (d.startsWith(String(year))) days.add(d);
        }
      }
      this.offDays.set(year, days);
    }
    return days;
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

  lookup(countryCode: string, regionCode?: string): PlaceLookup {
    const country = countryCode.toUpperCase();
    const countries = this.registry.getCountries("en");
    const countryName = countries[country];
    if (!countryName) {
      return { ok: false, missing: "country", message: `No holiday data for country "${countryCode}".` };
    }
    let region: Place["region"] = null;
    if (regionCode !== undefined) {
      const code = regionCode.toUpperCase().replace(new RegExp(`^${country}-`), "");
      const name = this.registry.getStates(country, "en")?.[code];
      if (!name) {
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
      calendar = new Calendar(make({ languages: ["en"] }), local, local.getTimezones()[0] ?? "UTC", country);
      this.calendars.set(key, calendar);
    }
    const weekend = calendar.weekend.map((d) => WEEKDAYS[d - 1] as string);
    return {
      ok: true,
      calendar,
      place: { country: { code: country, name: countryName }, region, timezone: calendar.timezone, weekend },
    };
  }
}
