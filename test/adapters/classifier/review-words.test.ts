import { describe, expect, it } from "vitest";
import {
  BUSINESS_WORDS,
  type FeatureOptions,
  MARKET_WORDS,
  REVIEW_WORDS,
} from "../../../src/adapters/classifier/features.js";
import { LEXICON } from "../../../src/adapters/classifier/vader-scores.js";
import { compound } from "./lexicon-compound.js";

const FINANCE: FeatureOptions = { negation: "window", bigrams: true, charGrams: false, market: true, business: true };
const REVIEWS: FeatureOptions = { ...FINANCE, reviews: true };

describe("review words", () => {
  it("are words neither VADER's lexicon nor the market or business words have", () => {
    for (const w of REVIEW_WORDS.keys()) {
      expect(LEXICON.has(w), w).toBe(false);
      expect(MARKET_WORDS.has(w) || BUSINESS_WORDS.has(w), w).toBe(false);
    }
  });

  it("give product and film verdicts a sign only when the model's features ask for them", () => {
    const cases: [string, number][] = [
      ["The hinge is flimsy and it malfunctioned twice", -1],
      ["Returned it for a refund", -1],
      ["Tedious, overlong and predictable", -1],
      ["Sturdy and durable", 1],
      ["A gripping, riveting film", 1],
    ];
    for (const [text, sign] of cases) {
      expect(Math.sign(compound(text, REVIEWS)), text).toBe(sign);
      expect(compound(text, FINANCE), text).toBe(0);
    }
  });

  it("are negated like any lexicon word", () => {
    expect(compound("not flimsy at all", REVIEWS)).toBeGreaterThan(0);
  });
});
