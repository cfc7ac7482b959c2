import { describe, expect, it } from "vitest";
import type { Example } from "../../scripts/train/data.js";
import { ECE_BINS, eceBin, score } from "../../scripts/train/metrics.js";

/** Examples with 3-class truth `labels` (binary truth irrelevant here). */
const examples = (labels: (0 | 1 | 2)[]): Example[] =>
  labels.map((label) => ({ corpus: "tweets", split: "test", text: "", label, binary: null }));

describe("the model card's ECE is the standard top-label ECE (15 equal-width bins)", () => {
  it("bins are ((m−1)/15, m/15]: a confidence of exactly 1 is in the last, 1/3 in the fifth", () => {
    expect(ECE_BINS).toBe(15);
    expect(eceBin(1)).toBe(14);
    expect(eceBin(1 / 3)).toBe(4);
    expect(eceBin(0.61)).toBe(9);
    expect(eceBin(0.69)).toBe(10);
  });

  it("two confidences 0.61 (right) and 0.69 (wrong) fall in different bins: ECE 0.54, not 10 bins' 0.15", () => {
    const p = Float64Array.from([0.61, 0.2, 0.19, 0.69, 0.21, 0.1]);
    const m = score(p, examples([0, 2]));
    expect(m.ece.value).toBeCloseTo((0.39 + 0.69) / 2, 10);
  });

  it("a calibrated bin has no error: confidence 0.75 and three of four right", () => {
    const p = Float64Array.from(Array.from({ length: 4 }, () => [0.75, 0.15, 0.1]).flat());
    expect(score(p, examples([0, 0, 0, 1])).ece.value).toBeCloseTo(0, 10);
  });
});
