import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Example } from "../../../scripts/train/data.js";
import { featureStore, rowWeights, type Settings, trainRun } from "../../../scripts/train/fit.js";
import type { Interval, Metrics } from "../../../scripts/train/metrics.js";
import { cardMetrics, type OrderRun, overOrders, type Report } from "../../../scripts/train/report.js";

const metricsUrl = new URL("../../../src/adapters/classifier/model/metrics.json", import.meta.url);

const ex = (corpus: Example["corpus"], label: 0 | 1 | 2, text = ""): Example => ({
  corpus,
  split: "train",
  text,
  label,
  binary: label === 1 ? null : label,
});

describe("the trainer's calibration weights", () => {
  it("with polar shares: neutral a third of each corpus, its positive and negative texts alike", () => {
    const examples = [ex("xed", 0), ex("xed", 0), ex("xed", 0), ex("xed", 2), ex("xed", 1), ex("xed", 1)];
    const rows = examples.map((_, i) => i);
    const w = rowWeights(examples, rows, 1, true);
    expect(w[0]).toBeCloseTo(w[3] as number, 12);
    const neutral = (w[4] as number) + (w[5] as number);
    expect(neutral / w.reduce((a, b) => a + b, 0)).toBeCloseTo(1 / 3, 12);
    // balanced: each class a third, so a negative text weighs three positive ones
    const b = rowWeights(examples, rows, 1);
    expect(b[3]).toBeCloseTo(3 * (b[0] as number), 12);
  });
});

describe("tail averaging", () => {
  const texts = ["good day", "bad day", "great stuff", "awful stuff", "fine", "terrible"];
  const examples = texts.map((t, i) => ex("tweets", i % 2 === 0 ? 0 : 2, t));
  // the shipped model's settings (as metrics.json records them), on a tiny table, fast and without decay
  const shipped = (JSON.parse(readFileSync(metricsUrl, "utf8")) as Report).model.settings;
  const s: Settings = { ...shipped, bits: 10, epochs: 3, sparseLr: 0.5, seed: 1, seeds: 1, decay: false, average: 0 };
  const store = featureStore(texts, s.features);
  const rows = texts.map((_, i) => i);

  it("over the last step is the last iterate; over more steps it differs, and the last iterate does not change", () => {
    const steps = (s.epochs - 1) * rows.length;
    const [last, lastStep, half] = trainRun(store, examples, rows, s, [1 / steps, 0.5]);
    const [plain] = trainRun(store, examples, rows, s);
    expect([...(plain?.weights ?? [])]).toEqual([...(last?.weights ?? [])]);
    expect([...(lastStep?.weights ?? [])]).toEqual([...(last?.weights ?? [])]);
    expect([...(lastStep?.dense ?? [])]).toEqual([...(last?.dense ?? [])]);
    expect([...(half?.weights ?? [])]).not.toEqual([...(last?.weights ?? [])]);
    // a weight that only grows is smaller on average than at the end
    const j = (last?.weights ?? []).findIndex((x) => x > 0);
    expect(half?.weights[j]).toBeLessThan(last?.weights[j] as number);
  });
});

describe("a held-out fold over several training orders", () => {
  const at = (value: number): Interval => ({ value, lo: value - 0.01, hi: value + 0.01 });
  const metrics = (acc: number, bin: number): Metrics => ({
    n: 10,
    accuracy: at(acc),
    macroF1: at(0.5),
    logLoss: at(0.9),
    brier: at(0.5),
    ece: at(0.05),
    binaryN: 8,
    binaryAccuracy: at(bin),
    balancedBinary: at(bin),
  });
  const run = (seed: number, acc: number, bin: number, g: number): OrderRun => ({
    seed,
    model: metrics(acc, bin),
    gain: [g, 1, 1],
    bias: [0, 0, g],
  });
  const row = overOrders("xed", 0, metrics(0.5, 0.6), [
    run(42, 0.6, 0.7, 1),
    run(1042, 0.62, 0.74, 2),
    run(2042, 0.64, 0.72, 3),
  ]);

  it("is the mean of every figure and interval end, and of the calibrations", () => {
    expect(row.model.accuracy.value).toBeCloseTo(0.62, 12);
    expect(row.model.binaryAccuracy.lo).toBeCloseTo(0.72 - 0.01, 12);
    expect(row.model.n).toBe(10);
    expect(row.gain).toEqual([2, 1, 1]);
    expect(row.orders?.map((o) => o.seed)).toEqual([42, 1042, 2042]);
  });

  it("shows the mean with the orders' range in the card", () => {
    const report = { loco: [row], test: {} } as unknown as Report;
    const card = cardMetrics(report);
    expect(card).toContain("mean over 3 training orders (base seeds 42, 1042, 2042)");
    expect(card).toContain("| 62.0 (61.0–63.0) [60.0–64.0] |");
    expect(card).toContain("| 72.0 (71.0–73.0) [70.0–74.0] |");
  });

  it("with one order is that order's row, as before", () => {
    const one = overOrders("xed", 0, metrics(0.5, 0.6), [run(42, 0.6, 0.7, 1)]);
    expect(one.orders).toBeUndefined();
    expect(cardMetrics({ loco: [one], test: {} } as unknown as Report)).toContain(
      "| 60.0 (59.0–61.0) | 50.0 (49.0–51.0) |",
    );
  });
});
