import { describe, expect, it } from "vitest";
import { featureBuffer, featurize, MARKET_WORDS } from "../../../src/adapters/classifier/features.js";
import { loadShippedModel } from "../../../src/adapters/classifier/model-file.js";
import { LEXICON } from "../../../src/adapters/classifier/vader-scores.js";

/** The lexicon features' compound (DENSE[1]) of a text. */
function compound(text: string, market: boolean): number {
  const buf = featureBuffer();
  featurize(text, 18, buf, { negation: "window", bigrams: true, charGrams: false, market });
  return buf.dense[1] as number;
}

describe("market words join the lexicon features of a model trained with them", () => {
  it("are words VADER's lexicon lacks, rising ones positive and falling ones negative", () => {
    for (const w of MARKET_WORDS.keys()) expect(LEXICON.has(w), w).toBe(false);
    expect(MARKET_WORDS.get("upgraded")).toBeGreaterThan(0);
    expect(MARKET_WORDS.get("plunges")).toBeLessThan(0);
  });

  it("move the lexicon compound only when the model's features ask for them, and negation turns them", () => {
    const falling = "Acme stock plunges after the downgrade";
    expect(compound(falling, false)).toBe(0);
    expect(compound(falling, true)).toBeLessThan(0);
    expect(compound("Acme stock surges to a record", true)).toBeGreaterThan(0);
    expect(compound("Acme stock did not fall", true)).toBeGreaterThan(0);
  });

  it("the shipped model was trained with them", () => {
    expect(loadShippedModel().features?.market).toBe(true);
  });
});
