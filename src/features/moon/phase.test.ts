import { MakeTime, SearchMoonQuarter } from "astronomy-engine";
import { describe, expect, it } from "vitest";
import { meeusPhaseJde } from "../../../test/fixtures/meeus-phases.js";
import { nextQuarter, searchQuarter } from "./phase.js";

const J2000 = 2451545.0;

/** Seconds by which each instant is later than Meeus's, over 2020–2030 (TT, so ΔT plays no part). */
function biases(first: { quarter: number; time: { tt: number } }, next: (q: never) => typeof first): number[] {
  const out: number[] = [];
  let q = first;
  for (let i = 0; i < 4 * 136; i++) {
    const jde = q.time.tt + J2000;
    const k = Math.round(((jde - 2451550.09766) / 29.530588861) * 4) / 4;
    expect(((k % 1) + 1) % 1).toBe(q.quarter / 4); // the same phase on both sides
    out.push((jde - meeusPhaseJde(k)) * 86_400);
    q = next(q as never);
  }
  return out;
}

const stats = (xs: number[]) => ({
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
  max: Math.max(...xs.map(Math.abs)),
});

describe("principal phase instants against Meeus ch. 49 (an independent theory)", () => {
  it("the reference reproduces the book's worked example 49.a", () => {
    expect(meeusPhaseJde(-283)).toBeCloseTo(2443192.65118, 5);
  });

  it("are unbiased: mean under 5 s and every one of 544 (2020–2030) within 20 s", () => {
    const { mean, max } = stats(biases(searchQuarter(MakeTime(new Date("2020-01-01T00:00:00Z"))), nextQuarter));
    expect(Math.abs(mean)).toBeLessThan(5);
    expect(max).toBeLessThan(20);
  });

  it("the reference does tell: astronomy-engine's own search (Sun without aberration) is ~40 s late", () => {
    const own = biases(
      SearchMoonQuarter(new Date("2020-01-01T00:00:00Z")),
      (q: { time: ReturnType<typeof MakeTime> }) => SearchMoonQuarter(q.time.AddDays(6)),
    );
    expect(stats(own).mean).toBeGreaterThan(30);
  });
});
