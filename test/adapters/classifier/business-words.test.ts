import { describe, expect, it } from "vitest";
import {
  BUSINESS_WORDS,
  CHANGE_WORDS,
  type FeatureOptions,
  MARKET_WORDS,
  MEASURES,
} from "../../../src/adapters/classifier/features.js";
import { LEXICON } from "../../../src/adapters/classifier/vader-scores.js";
import { compound } from "./lexicon-compound.js";

const MARKET: FeatureOptions = { negation: "window", bigrams: true, charGrams: false, market: true };
const ALL: FeatureOptions = { ...MARKET, business: true, direction: true, signed: true };

describe("business words, change read against what changes, and signed percentages", () => {
  it("business words are words neither VADER's lexicon nor the market words have", () => {
    for (const w of BUSINESS_WORDS.keys()) {
      expect(LEXICON.has(w), w).toBe(false);
      expect(MARKET_WORDS.has(w), w).toBe(false);
    }
    expect(BUSINESS_WORDS.get("writedown")).toBeLessThan(0);
    expect(BUSINESS_WORDS.get("📈")).toBeGreaterThan(0);
  });

  it("every change word has a valence of its own, and no word is both a change and a measure", () => {
    const lexical = (w: string) => LEXICON.get(w) ?? MARKET_WORDS.get(w) ?? BUSINESS_WORDS.get(w);
    for (const w of CHANGE_WORDS.keys()) {
      expect(lexical(w), w).toBeDefined();
      expect(MEASURES.has(w), w).toBe(false);
    }
  });

  it("business words move the compound only when the model's features ask for them", () => {
    expect(compound("Acme books a writedown", MARKET)).toBe(0);
    expect(compound("Acme books a writedown", { ...MARKET, business: true })).toBeLessThan(0);
    expect(compound("Acme 📈", { ...MARKET, business: true })).toBeGreaterThan(0);
  });

  it("a rise of something bad when it grows is bad, its fall good; a rise of profit stays good", () => {
    const cases: [string, number][] = [
      ["Costs rose sharply", -1],
      ["The net loss narrowed to EUR 1 mn", 1],
      ["Acme cut costs", 1],
      ["Profit fell", -1],
      ["Fears eased", 1],
      ["The net loss widened to EUR 3 mn", -1],
      ["Operating profit rose to EUR 13.1 mn from EUR 8.7 mn", 1],
    ];
    for (const [text, sign] of cases) expect(Math.sign(compound(text, ALL)), text).toBe(sign);
    // without the reading, the first five read the other way (or not at all)
    for (const [text, sign] of cases.slice(0, 5)) expect(Math.sign(compound(text, MARKET)), text).not.toBe(sign);
  });

  it("a change reaches a measure only within its clause", () => {
    expect(compound("Costs are high. Shares rose", ALL)).toBeGreaterThan(0);
    expect(compound("Shares rose, costs too", ALL)).toBeGreaterThan(0);
  });

  it("a signed percentage or 'up' before a number is a rise or a fall; other numbers are not", () => {
    expect(compound("Acme +5% after results", ALL)).toBeGreaterThan(0);
    expect(compound("Acme -3.2% after results", ALL)).toBeLessThan(0);
    expect(compound("Acme −0,4 % today", ALL)).toBeLessThan(0);
    expect(compound("Revenue up 5% in the quarter", ALL)).toBeGreaterThan(0);
    expect(compound("Costs up 5% in the quarter", ALL)).toBeLessThan(0);
    for (const text of ["Acme +5% after results", "Revenue up 5% in the quarter"])
      expect(compound(text, { ...ALL, signed: false }), text).toBe(0);
    for (const text of ["COVID-19 cases", "between 2019-2020", "call +1 555 0100", "5% of sales"])
      expect(compound(text, ALL), text).toBe(0);
  });
});
