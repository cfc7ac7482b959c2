import { describe, expect, it } from "vitest";
import type { Example } from "../../../scripts/train/data.js";
import { score } from "../../../scripts/train/metrics.js";

const polar = (binary: (0 | 2)[]): Example[] =>
  binary.map((b) => ({ corpus: "fintweets", split: "test", text: "", label: b, binary: b }));

describe("balanced binary accuracy: each polarity weighs alike", () => {
  it("a model that always answers positive on a set 3 in 4 positive: binary 0.75, balanced 0.5", () => {
    const p = Float64Array.from(Array.from({ length: 4 }, () => [0.4, 0.3, 0.3]).flat());
    const m = score(p, polar([0, 0, 0, 2]));
    expect(m.binaryAccuracy.value).toBeCloseTo(0.75, 10);
    expect(m.balancedBinary.value).toBeCloseTo(0.5, 10);
  });

  it("is the mean of the positive and the negative texts' accuracy, neutral texts aside", () => {
    // positives: right, wrong; negatives: right, right, right; one neutral text
    const p = Float64Array.from([
      0.6, 0.2, 0.2, 0.2, 0.2, 0.6, 0.1, 0.2, 0.7, 0.1, 0.3, 0.6, 0.2, 0.2, 0.6, 0.1, 0.8, 0.1,
    ]);
    const ex: Example[] = [
      ...polar([0, 0, 2, 2, 2]),
      { corpus: "xed", split: "test", text: "", label: 1, binary: null },
    ];
    const m = score(p, ex);
    expect(m.binaryAccuracy.value).toBeCloseTo(4 / 5, 10);
    expect(m.balancedBinary.value).toBeCloseTo((1 / 2 + 3 / 3) / 2, 10);
  });
});
