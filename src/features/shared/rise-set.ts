import { type Body, type Observer, SearchHourAngle, SearchRiseSet } from "astronomy-engine";

const DAY_MS = 86_400_000;

/**
 * Every event in [from, until) that `next` finds, searching from `from` and then from a minute
 * after each event found (`daysLeft`: the rest of the window, in days); `next` gives undefined
 * when it finds none.
 */
export function eventsIn(from: Date, until: Date, next: (t: Date, daysLeft: number) => Date | undefined): Date[] {
  const found: Date[] = [];
  for (let t = from; t < until; ) {
    const hit = next(t, (until.getTime() - t.getTime()) / DAY_MS);
    if (!hit || hit >= until) break;
    found.push(hit);
    t = new Date(hit.getTime() + 60_000);
  }
  return found;
}

/**
 * Every rise (+1) or set (−1) of `body`'s upper limb inside [from, until): at high latitudes a
 * civil day can hold two (the Moon's ~24 h 50 min day can still fit two rises into one day when
 * its declination changes fast, and DST days are 25 h long).
 */
export function crossings(body: Body, observer: Observer, direction: 1 | -1, from: Date, until: Date): Date[] {
  return eventsIn(from, until, (t, daysLeft) => SearchRiseSet(body, observer, direction, t, daysLeft)?.date);
}

/** Every upper culmination of `body` inside [from, until). */
export function culminations(body: Body, observer: Observer, from: Date, until: Date): Date[] {
  return eventsIn(from, until, (t) => SearchHourAngle(body, observer, 0, t, +1).time.date);
}
