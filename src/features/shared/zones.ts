import { LRUCache } from "lru-cache";
import { DateTime, IANAZone, Info, type Zone } from "luxon";

const HOUR_MS = 3_600_000;

/** Year, month, day, hour, minute, second, millisecond. */
export type LocalFields = [number, number, number, number, number, number, number];

/**
 * Epoch ms of local fields read as UTC: luxon's objToLocalTS (Date.UTC reads years 0–99 as
 * 1900–1999; they are set again).
 */
export function localTs([year, month, day, hour, minute, second, ms]: LocalFields): number {
  const ts = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (year >= 100 || year < 0) return ts;
  const d = new Date(ts);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}

/**
 * An IANA zone whose offsets are remembered per hour. luxon asks `Intl` for the offset of every
 * instant it touches (formatToParts, about 3 µs each, a dozen times per moon report); offsets
 * change only at transitions, so an hour whose first and last millisecond have the same offset
 * has it throughout (tzdb has no two transitions within an hour). Hours holding a transition
 * are not cached and ask luxon each time.
 */
export class CachedIanaZone extends IANAZone {
  private readonly hours = new LRUCache<number, number>({ max: 4096 });
  /** luxon's own formatter options for the zone (its makeDTF). */
  private readonly dtf: Intl.DateTimeFormat;

  constructor(name: string) {
    super(name);
    this.dtf = new Intl.DateTimeFormat("en-US", {
      hour12: false,
      timeZone: name,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      era: "short",
    });
  }

  override offset(ts: number): number {
    if (!Number.isFinite(ts)) return super.offset(ts);
    const hour = Math.floor(ts / HOUR_MS);
    const known = this.hours.get(hour);
    if (known !== undefined) return Number.isNaN(known) ? this.uncached(ts) : known;
    const first = this.uncached(hour * HOUR_MS);
    const last = this.uncached(hour * HOUR_MS + HOUR_MS - 1);
    this.hours.set(hour, first === last ? first : Number.NaN);
    return first === last ? first : this.uncached(ts);
  }

  /**
   * luxon's IANAZone.offset read from `format` instead of `formatToParts` (its fallback for
   * engines without the latter): the same fields from the same formatter, ~1 µs instead of ~3.
   */
  uncached(ts: number): number {
    const parsed = /(\d+)\/(\d+)\/(\d+) (AD|BC),? (\d+):(\d+):(\d+)/.exec(this.dtf.format(ts).replace(/\u200E/g, ""));
    if (!parsed) return super.offset(ts);
    const n = (i: number) => Number(parsed[i]);
    const [month, day, hour] = [n(1), n(2), n(5)];
    const year = parsed[4] === "BC" ? -Math.abs(n(3)) + 1 : n(3);
    const local = localTs([year, month, day, hour === 24 ? 0 : hour, n(6), n(7), 0]);
    const over = ts % 1000;
    return (local - (ts - (over >= 0 ? over : 1000 + over))) / 60_000;
  }
}

/**
 * luxon zones by name, IANA ones with their offsets cached (see CachedIanaZone); "UTC" and
 * other names luxon treats specially stay luxon's own. Hold one per app (or per route).
 */
export class TimeZones {
  // Names come canonicalised (canonicalZone, tz-lookup), so this holds at most tzdb's zones.
  private readonly zones = new Map<string, Zone>();
  /** Local noon and day bounds of calendar dates, by `zone date` (see resolveWhen). */
  readonly days = new LRUCache<string, { at: number; date: string; start: number; end: number }>({ max: 10_000 });

  get(name: string): Zone {
    let zone = this.zones.get(name);
    if (!zone) {
      const plain = Info.normalizeZone(name);
      zone = plain.type === "iana" && plain.isValid ? new CachedIanaZone(name) : plain;
      if (this.zones.size < 2048) this.zones.set(name, zone);
    }
    return zone;
  }
}

const MINUTE_MS = 60_000;
/** Epoch ms of the start of the (UTC) minute holding `ms`: the span LocalToday keeps a date for. */
const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

/**
 * Today's calendar date (YYYY-MM-DD) in a zone, worked out once per zone and minute: a minute
 * with the same offset and date at its first and last millisecond has no midnight or
 * transition inside (local time runs on monotonically), so the date holds for all of it.
 */
export class LocalToday {
  private readonly byZone = new Map<string, { from: number; date: string; midnight?: number }>();

  constructor(private readonly zones = new TimeZones()) {}

  /**
   * Epoch ms of the next local midnight in `zone` after `now` (when get()'s answer changes); kept
   * with get()'s minute, which never holds a midnight (such a minute is not kept).
   */
  nextMidnight(zone: string, now: Date): number {
    const hit = this.byZone.get(zone);
    if (hit?.from === minuteOf(now.getTime())) {
      hit.midnight ??= this.midnightAfter(zone, now);
      return hit.midnight;
    }
    return this.midnightAfter(zone, now);
  }

  private midnightAfter(zone: string, now: Date): number {
    return DateTime.fromMillis(now.getTime(), { zone: this.zones.get(zone) })
      .startOf("day")
      .plus({ days: 1 })
      .toMillis();
  }

  get(zone: string, now: Date): string {
    const ms = now.getTime();
    const from = minuteOf(ms);
    const hit = this.byZone.get(zone);
    if (hit?.from === from) return hit.date;
    const z = this.zones.get(zone);
    const first = DateTime.fromMillis(from, { zone: z });
    const last = DateTime.fromMillis(from + MINUTE_MS - 1, { zone: z });
    const date = first.toISODate() ?? "";
    if (first.offset === last.offset && date === last.toISODate()) {
      if (this.byZone.size < 2048 || this.byZone.has(zone)) this.byZone.set(zone, { from, date });
      return date;
    }
    return DateTime.fromMillis(ms, { zone: z }).toISODate() ?? "";
  }
}
