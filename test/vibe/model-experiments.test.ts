import { describe, expect, it } from "vitest";
import { calFeature, fitInputCalibration } from "../../scripts/train-calibration.js";
import type { LocoRow, Report, Variant } from "../../scripts/train-classifier.js";
import { type Example, rng } from "../../scripts/train-data.js";
import { type Metrics, pairedScore, signLoss } from "../../scripts/train-metrics.js";
import { cardMetrics, markdownReport, metricsJson } from "../../scripts/train-report.js";
import { DENSE, featureBuffer, featurize, NEGATION_EXTRA } from "../../src/adapters/classifier/features.js";

/** The trainer's experiment support: negation-scope features and every variant's full table in the card. */
describe("negation-scope features (a trainer variant's extra dense features)", () => {
  const negation = (text: string) => {
    const buf = featureBuffer();
    featurize(text, 18, buf);
    return Object.fromEntries(NEGATION_EXTRA.map((name, i) => [name, buf.negation[i]]));
  };

  it("count the positive and negative lexicon words inside a negation's scope", () => {
    expect(negation("The food was good.")).toEqual({ negation_word: 0, negated_positive: 0, negated_negative: 0 });
    expect(negation("The food was not good.")).toEqual({
      negation_word: 1,
      negated_positive: 1 / 3,
      negated_negative: 0,
    });
    expect(negation("It isn't bad, and not ugly or awful or horrible at all")).toEqual({
      negation_word: 1,
      negated_positive: 0,
      negated_negative: 1,
    });
  });

  it("end at the clause's end: a lexicon word after the comma is not negated", () => {
    expect(negation("Not today, good news came")).toMatchObject({ negation_word: 1, negated_positive: 0 });
  });
});

describe("the model card's metrics section", () => {
  const interval = (value: number) => ({ value, lo: value - 0.01, hi: value + 0.01 });
  const metrics = (acc: number): Metrics => ({
    n: 100,
    accuracy: interval(acc),
    macroF1: interval(0.6),
    logLoss: interval(0.9),
    brier: interval(0.5),
    ece: interval(0.08),
    binaryN: 80,
    binaryAccuracy: interval(0.8),
  });
  const loco = (acc: number): LocoRow[] =>
    (["tweets", "amazon", "goemotions"] as const).map((heldOut) => ({
      heldOut,
      model: metrics(acc),
      vader: metrics(0.6),
      temperature: 1,
      gain: [1, 1, 1],
      bias: [0, 0, 0],
    }));
  const variant = (name: string) => ({ name }) as Variant;
  const report: Report = {
    model: { name: "m", version: "9.9.9", bits: 18, bytes: 1, variant: variant("shipped") },
    data: {
      tweets: { train: 1, calibration: 1, test: 1 },
      amazon: { train: 1, calibration: 1, test: 1 },
      goemotions: { train: 1, calibration: 1, test: 1 },
    },
    variants: [
      { variant: variant("an experiment"), loco: loco(0.55) },
      { variant: variant("shipped"), loco: loco(0.65) },
    ],
    shipped: {
      loco: loco(0.65),
      test: { tweets: { model: metrics(0.7), vader: metrics(0.6) } } as Report["shipped"]["test"],
    },
    trainSeconds: 0,
  };

  it("gives every variant its full leave-one-corpus-out table, with intervals, macro-F1, Brier and ECE", () => {
    const md = markdownReport(report);
    const section = md.slice(md.indexOf("### Every variant in full"), md.indexOf("### Data"));
    expect(section).toContain("#### an experiment");
    expect(section).toContain("#### shipped");
    const rows = section.split("\n").filter((l) => /^\| (tweets|amazon|goemotions) \|/.test(l));
    expect(rows).toHaveLength(6);
    expect(rows[0]).toBe(
      "| tweets | 100 | 55.0 (54.0–56.0) | -5.0 | 0.600 (0.590–0.610) | 80.0 (79.0–81.0) (80) | +0.0 | 0.900 (0.890–0.910) | 0.500 (0.490–0.510) | 0.080 (0.070–0.090) |",
    );
  });

  it("renders the card from the figures as metrics.json stores them: a fresh run and a reused one agree", () => {
    const fresh = structuredClone(report);
    const row = fresh.variants[0]?.loco[0] as LocoRow;
    row.model.ece = { value: 0.08149996, lo: 0.07, hi: 0.09 }; // 0.081 as it is, stored as 0.0815: 0.082
    const stored = JSON.parse(metricsJson(fresh)) as Report;
    expect(stored.variants[0]?.loco[0]?.model.ece.value).toBe(0.0815);
    expect(markdownReport(fresh)).not.toBe(markdownReport(stored));
    expect(cardMetrics(fresh)).toBe(cardMetrics(stored));
    expect(cardMetrics(fresh)).toBe(markdownReport(stored));
  });
});

describe("paired comparison of two models on the same texts", () => {
  const ex = Array.from({ length: 40 }, (_, i) => ({
    corpus: "tweets",
    split: "test",
    text: `t${i}`,
    label: (i % 2 === 0 ? 0 : 2) as 0 | 2,
    binary: (i % 2 === 0 ? 0 : 2) as 0 | 2,
  })) as Example[];
  const right = (e: Example) => (e.label === 0 ? [0.7, 0.2, 0.1] : [0.1, 0.2, 0.7]);
  const wrong = (e: Example) => (e.label === 0 ? [0.1, 0.2, 0.7] : [0.7, 0.2, 0.1]);

  it("is zero with zero-width intervals for the same model", () => {
    const p = Float64Array.from(ex.flatMap((e, i) => (i < 30 ? right(e) : wrong(e))));
    const d = pairedScore(p, p, ex);
    for (const k of ["accuracy", "binaryAccuracy", "logLoss", "ece"] as const)
      expect([k, d[k].value, d[k].lo, d[k].hi]).toEqual([k, 0, 0, 0]);
    expect([d.accuracy.onlyA, d.accuracy.onlyB]).toEqual([0, 0]);
  });

  it("counts the texts only one model gets right, and the difference b − a", () => {
    const a = Float64Array.from(ex.flatMap((e, i) => (i < 30 ? right(e) : wrong(e))));
    const b = Float64Array.from(ex.flatMap((e, i) => (i < 34 && i !== 0 ? right(e) : wrong(e))));
    const d = pairedScore(a, b, ex);
    expect([d.accuracy.onlyA, d.accuracy.onlyB]).toEqual([1, 4]);
    expect(d.accuracy.value).toBeCloseTo(3 / 40, 12);
    expect(d.binaryAccuracy.value).toBeCloseTo(3 / 40, 12);
    expect(d.accuracy.lo).toBeLessThanOrEqual(d.accuracy.value);
    expect(d.accuracy.hi).toBeGreaterThanOrEqual(d.accuracy.value);
    expect(d.logLoss.value).toBeLessThan(0);
  });
});

describe("input-dependent calibration (a trainer variant: the temperature a function of per-text features)", () => {
  /** Logits whose true gain is 0.5 on "long" texts (φ = 0) and 2 on "short" ones (φ = 1), labels drawn from it. */
  const synthetic = (n: number) => {
    const draw = rng(3);
    const z = new Float64Array(n * 3);
    const phi = new Float64Array(n);
    const labels: number[] = [];
    for (let i = 0; i < n; i++) {
      phi[i] = i % 2;
      const g = phi[i] ? 2 : 0.5;
      const [e0, e1, e2] = [0, 1, 2].map((c) => {
        z[i * 3 + c] = 4 * draw() - 2;
        return Math.exp((z[i * 3 + c] as number) * g);
      }) as [number, number, number];
      const u = draw() * (e0 + e1 + e2);
      labels.push(u < e0 ? 0 : u < e0 + e1 ? 1 : 2);
    }
    return { z, phi, labels, weight: new Float64Array(n).fill(1) };
  };

  it("recovers a gain that differs with a feature, which one temperature cannot", () => {
    const { z, phi, labels, weight } = synthetic(4000);
    const fit = fitInputCalibration(z, phi, 1, labels, weight, false);
    expect(Math.exp(fit.a[0] as number)).toBeCloseTo(0.5, 0);
    expect(Math.exp((fit.a[0] as number) + (fit.a[1] as number))).toBeGreaterThan(1.6);
    expect(Math.exp((fit.a[0] as number) + (fit.a[1] as number))).toBeLessThan(2.5);
    expect(fit.c).toEqual([0, 0]);
  });

  it("leaves the biases alone when told to (the labels-kept variant fits the gain on calibrated logits)", () => {
    const { z, phi, labels, weight } = synthetic(500);
    expect(fitInputCalibration(z, phi, 1, labels, weight, false, false).bias).toEqual([0, 0, 0]);
  });

  it("reads its features from the dense features: word-count bins, and |VADER's compound| only when stacked", () => {
    const dense = (text: string) => {
      const buf = featureBuffer();
      featurize(text, 18, buf);
      return buf.dense.subarray(0, DENSE.length);
    };
    const words = (n: number) => Array.from({ length: n }, () => "word").join(" ");
    expect(calFeature("short", dense(words(10)))).toBe(1);
    expect(calFeature("short", dense(words(11)))).toBe(0);
    expect(calFeature("long", dense(words(25)))).toBe(0);
    expect(calFeature("long", dense(words(26)))).toBe(1);
    expect(calFeature("no_lexicon_hit", dense(words(3)))).toBe(1);
    expect(() => calFeature("vader_magnitude", dense("good"))).toThrow(/VADER/);
  });
});

describe("the positive-vs-negative loss of the binaryLoss variants", () => {
  const softmax = (z: number[]) => {
    const e = z.map(Math.exp);
    const t = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / t);
  };
  it("is −log σ(±(z_pos − z_neg)) whatever z_neutral, with its derivative in z_pos", () => {
    for (const [z, positive] of [
      [[0.3, 1.2, -0.4], true],
      [[-1, 0.5, 2], true],
      [[2, -3, 0.1], false],
    ] as const) {
      const at = (zz: number[]) => {
        const p = softmax(zz);
        return signLoss(p[0] as number, p[2] as number, positive);
      };
      const { loss, grad } = at([...z]);
      const d = (z[0] as number) - (z[2] as number);
      expect(loss).toBeCloseTo(Math.log1p(Math.exp(positive ? -d : d)), 10);
      const h = 1e-6;
      const numeric = (at([z[0] + h, z[1], z[2]]).loss - at([z[0] - h, z[1], z[2]]).loss) / (2 * h);
      expect(grad).toBeCloseTo(numeric, 6);
      expect(at([z[0], z[1] + 5, z[2]]).loss).toBeCloseTo(loss, 10);
    }
  });
});
