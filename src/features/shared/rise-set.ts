import { type Body, type Observer, SearchHourAngle, SearchRiseSet } from "astronomy-engine";

const DAY_MS = 86_400_000;

/**
 * Every rise (+1) or set (−1) of `body`'s upper limb inside [from, until): at high latitudes a
 * civil day can hold two (the Moon's ~24 h 50 min day can still fit two rises into one day when
 * its declination changes fast, and DST days are 25 h long).
 */
export function crossings(body: Body, observer: Observer, direction: 1 | -1, from: Date, until: Date): Date[] {
  const found: Date[] = [];
  let t = from;
  while (t < until) {
    const hit = SearchRiseSet(body, observer, direction, t, (until.getTime() - t.getTime()) / DAY_MS)?.date;
    if (!hit || hit >= until) break;
    found.push(hit);
    t = new Date(hit.getTime() + 60_000);
  }
  return found;
}

/** Every upper culmination of `body` inside [from, until). */
export function culminations(body: Body, observer: Observer, from: Date, until: Date): Date[] {
  const found: Date[] = [];
  for (let t = from; ; ) {
    const hit = SearchHourAngle(body, observer, 0, t, +1).time.date;
    if (hit >= until) return found;
    found.push(hit);
    t = new Date(hit.getTime() + 60_000);
  }
}
