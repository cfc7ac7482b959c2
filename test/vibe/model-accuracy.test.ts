import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  CORPORA,
  goemotionsLabels,
  hasSentimentData,
  loadCorpora,
  loadGoEmotions,
  sentimentDir,
} from "../../scripts/train/data.js";
import { score } from "../../scripts/train/metrics.js";
import { cardMetrics, type Report } from "../../scripts/train/report.js";
import { MODEL_VERSION } from "../../src/adapters/classifier/model-file.js";
import { readFlag } from "../../src/adapters/classifier/readable.js";
import { TrainedClassifier } from "../../src/adapters/classifier/trained.js";

/**
 * The CI accuracy check: the shipped model on the fixed test splits of ../shared/data/sentiment
 * (texts it was never trained on) may not fall more than 2 points below the figures of its model
 * card (src/adapters/classifier/model/metrics.json, which the card's tables are rendered from).
 */
const present = hasSentimentData();
if (!present) console.warn(`model-accuracy: skipped, no sentiment data at ${sentimentDir()} (set SENTIMENT_DATA_DIR)`);

const metricsUrl = new URL("../../src/adapters/classifier/model/metrics.json", import.meta.url);
const report = JSON.parse(readFileSync(metricsUrl, "utf8")) as Report;

describe("the model card", () => {
  it("is the served model's, and shows metrics.json's figures", () => {
    expect(report.model.version).toBe(MODEL_VERSION);
    expect(new TrainedClassifier().model.version).toBe(MODEL_VERSION);
    const card = readFileSync(new URL("../../docs/model-card.md", import.meta.url), "utf8");
    expect(card).toContain(cardMetrics(report));
    expect(card.split("\n").length).toBeLessThanOrEqual(250);
  });
});

describe.skipIf(!present)("the shipped model against its card (skipped when ../shared/data is absent)", () => {
  const corpora = present ? loadCorpora() : undefined;
  const model = new TrainedClassifier();

  it.each(CORPORA)("%s test split: 3-class and binary accuracy within 2 points of the card", (c) => {
    const ex = (corpora?.[c] ?? []).filter((e) => e.split === "test");
    expect(ex.length).toBeGreaterThan(300);
    const p = new Float64Array(ex.length * 3);
    for (const [i, e] of ex.entries()) {
      const s = model.classifyOne(e.text).scores;
      p.set([s.positive, s.neutral, s.negative], i * 3);
    }
    const m = score(p, ex);
    const card = report.test[c].model;
    expect(m.accuracy.value).toBeGreaterThanOrEqual(card.accuracy.value - 0.02);
    expect(m.binaryAccuracy.value).toBeGreaterThanOrEqual(card.binaryAccuracy.value - 0.02);
  });

  it("emotions on GoEmotions test: macro-F1 within 2 points of the card", () => {
    const card = report.emotions;
    expect(card).toBeDefined();
    const names = goemotionsLabels();
    const test = loadGoEmotions().filter((e) => e.split === "test");
    const labels = card?.labels ?? [];
    const counts = labels.map(() => ({ tp: 0, fp: 0, fn: 0 }));
    for (const e of test) {
      const truth = new Set(e.ids.map((id) => names[id]));
      const found = new Set(model.emotionsOf(e.text).map((x) => x.label as string));
      for (const [i, l] of labels.entries()) {
        const k = counts[i] as { tp: number; fp: number; fn: number };
        if (found.has(l) && truth.has(l)) k.tp++;
        else if (found.has(l)) k.fp++;
        else if (truth.has(l)) k.fn++;
      }
    }
    const f1 = counts.map((k) => (k.tp ? (2 * k.tp) / (2 * k.tp + k.fp + k.fn) : 0));
    const macro = f1.reduce((a, b) => a + b, 0) / labels.length;
    expect(macro).toBeGreaterThanOrEqual((card?.macroF1 ?? 1) - 0.02);
  });

  it("the readability test flags almost no English text of the corpora (at most 0.5 %)", () => {
    for (const c of ["tweets", "amazon", "goemotions", "newsmtsc", "xed"] as const) {
      const ex = corpora?.[c] ?? [];
      const flagged = ex.filter((e) => readFlag(e.text) !== undefined).length;
      expect(flagged / ex.length, c).toBeLessThanOrEqual(0.005);
    }
  });
});
