import { LRUCache } from "lru-cache";
import { DateTime, IANAZone, Info, type Zone } from "luxon";

const HOUR_MS = 3_600_000;

/**
 * An IANA zone whose offsets are remembered per hour. luxon asks `Intl` for the offset of every
 * instant it touches (formatToParts, about 2 µs each, a dozen times per moon report); offsets
 * change only at transitions, so an hour whose first and last millisecond have the same offset
 * has it throughout (tzdb has no two transitions within an hour). Hours holding a transition
 * are not cached and ask luxon each time.
 */
export class CachedIanaZone extends IANAZone {
  private readonly hours = new LRUCache<number, number>({ max: 4096 });

  override offset(ts: number): number {
    if (!Number.isFinite(ts)) return super.offset(ts);
    const hour = Math.floor(ts / HOUR_MS);
    const known = this.hours.get(hour);
    if (known !== undefined) return Number.isNaN(known) ? super.offset(ts) : known;
    const first = super.offset(hour * HOUR_MS);
    const last = super.offset(hour * HOUR_MS + HOUR_MS - 1);
    this.hours.set(hour, first === last ? first : Number.NaN);
    return first === last ? first : super.offset(ts);
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
