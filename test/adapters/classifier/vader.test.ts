import { describe, expect, it } from "vitest";
import { scoresFromCompound, VaderClassifier, vaderLabel } from "../../../src/adapters/classifier/vader.js";
import { polarityScores } from "../../../src/adapters/classifier/vader-scores.js";

describe("the embedded model's labels follow VADER's rule exactly", () => {
  it.each([
    [0.05, "positive"],
    [0.0499, "neutral"],
    [0, "neutral"],
    [-0.0499, "neutral"],
    [-0.05, "negative"],
    [-0.9, "negative"],
  ] as const)("compound %d → %s, and that label has the highest score", (c, label) => {
    expect(vaderLabel(c)).toBe(label);
    const s = scoresFromCompound(c);
    expect(s[label]).toBeGreaterThanOrEqual(Math.max(s.positive, s.neutral, s.negative) - 1e-12);
    expect(s.positive + s.neutral + s.negative).toBeCloseTo(1, 12);
  });

  it("the classifier labels texts by that rule and reports the label's own score as confidence", async () => {
    const { results } = (await new VaderClassifier().classify(["I hate it", "fine", "ok"])) as {
      results: { label: string; confidence: number; scores: Record<string, number> }[];
    };
    for (const [i, text] of ["I hate it", "fine", "ok"].entries()) {
      expect(results[i]?.label).toBe(vaderLabel(polarityScores(text).compound));
      expect(results[i]?.confidence).toBe(results[i]?.scores[results[i]?.label ?? ""]);
    }
  });

  it("smoothing keeps every probability away from 0 and 1 (no infinite log-loss)", () => {
    for (const c of [-1, 1]) {
      const s = scoresFromCompound(c);
      expect(Math.min(s.positive, s.neutral, s.negative)).toBeGreaterThan(0.02);
      expect(Math.max(s.positive, s.neutral, s.negative)).toBeLessThan(0.96);
    }
  });
});
