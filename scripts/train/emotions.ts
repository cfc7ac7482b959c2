/**
 * The emotion model (src/adapters/classifier/emotions.ts): one logistic output per GoEmotions
 * emotion over hashed words and character 3-grams (EMOTION_FEATURES), the lexicon features and
 * VADER's scores, trained on GoEmotions train by AdaGrad (each
 * emotion's positive texts weighted up by √(negatives / positives), at most 10), a threshold per
 * emotion chosen on GoEmotions dev (the one with the best F1 there), scored on GoEmotions test.
 */
import { type EmotionModel, emotionScores, encodeEmotions } from "../../src/adapters/classifier/emotions.js";
import type { FeatureOptions } from "../../src/adapters/classifier/features.js";
import { goemotionsLabels, loadGoEmotions, rng } from "./data.js";
import { featureStore, STRIDE, type Store, view } from "./fit.js";
import type { EmotionReport } from "./report.js";

export interface EmotionSettings {
  bits: number;
  epochs: number;
  lr: number;
  l2: number;
}

export const EMOTION_SETTINGS: EmotionSettings = { bits: 17, epochs: 6, lr: 0.15, l2: 1e-7 };
/** Character 3-grams carry the shared stems of rare emotions' words (embarrass-, nervous-, griev-); bigrams only crowd the buckets. */
export const EMOTION_FEATURES: FeatureOptions = { negation: "window", bigrams: false, charGrams: true };

function fitEmotions(
  store: Store,
  truth: Uint8Array[],
  rows: number[],
  k: number,
  s: EmotionSettings,
  features: FeatureOptions,
): EmotionModel {
  const size = k << s.bits;
  const w = new Float32Array(size);
  const g2 = new Float32Array(size);
  const dense = new Float64Array(STRIDE * k);
  const dg2 = new Float64Array(STRIDE * k);
  const pos = new Array<number>(k).fill(0);
  for (const r of rows) for (let e = 0; e < k; e++) pos[e] = (pos[e] as number) + (truth[r]?.[e] as number);
  const posWeight = pos.map((p) => Math.min(10, Math.sqrt((rows.length - p) / Math.max(1, p))));
  const order = [...rows];
  const scratch = new Int32Array(8192);
  const draw = rng(43);
  const z = new Float64Array(k);
  for (let epoch = 0; epoch < s.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(draw() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const r of order) {
      const f = view(store, r, s.bits, scratch);
      z.fill(0);
      for (let j = 0; j < f.n; j++) {
        const base = (f.index[j] as number) * k;
        const v = f.value[j] as number;
        for (let e = 0; e < k; e++) z[e] = (z[e] as number) + (w[base + e] as number) * v;
      }
      const y = truth[r] as Uint8Array;
      for (let e = 0; e < k; e++) {
        let a = z[e] as number;
        for (let d = 0; d < STRIDE; d++) a += (dense[d * k + e] as number) * (f.dense[d] as number);
        const p = 1 / (1 + Math.exp(-a));
        z[e] = y[e] ? (p - 1) * (posWeight[e] as number) : p;
      }
      for (let j = 0; j < f.n; j++) {
        const base = (f.index[j] as number) * k;
        const v = f.value[j] as number;
        for (let e = 0; e < k; e++) {
          const at = base + e;
          const gr = (z[e] as number) * v + s.l2 * (w[at] as number);
          g2[at] = (g2[at] as number) + gr * gr;
          w[at] = (w[at] as number) - (s.lr * gr) / Math.sqrt((g2[at] as number) + 1e-8);
        }
      }
      for (let d = 0; d < STRIDE; d++) {
        const x = f.dense[d] as number;
        if (x === 0) continue;
        for (let e = 0; e < k; e++) {
          const at = d * k + e;
          const gr = (z[e] as number) * x;
          dg2[at] = (dg2[at] as number) + gr * gr;
          dense[at] = (dense[at] as number) - (s.lr * gr) / Math.sqrt((dg2[at] as number) + 1e-8);
        }
      }
    }
  }
  // int8 with a per-emotion scale (99.99th percentile of |w| → 127)
  const q = new Int8Array(size);
  const scale: number[] = [];
  for (let e = 0; e < k; e++) {
    const mags: number[] = [];
    for (let j = e; j < size; j += k) if (w[j] !== 0) mags.push(Math.abs(w[j] as number));
    mags.sort((a, b) => a - b);
    const sc = (mags[Math.floor(mags.length * 0.9999)] ?? 1) / 127 || 1;
    scale.push(sc);
    for (let j = e; j < size; j += k) q[j] = Math.max(-127, Math.min(127, Math.round((w[j] as number) / sc)));
  }
  return { bits: s.bits, features, labels: [], weights: q, scale, dense, thresholds: [] };
}

const f1 = (tp: number, fp: number, fn: number) => (tp ? (2 * tp) / (2 * tp + fp + fn) : 0);

export function trainEmotions(
  dir: string,
  features: FeatureOptions = EMOTION_FEATURES,
  s: EmotionSettings = EMOTION_SETTINGS,
): { report: EmotionReport; bytes: Buffer } {
  const names = goemotionsLabels(dir);
  const labels = names.filter((n) => n !== "neutral");
  const k = labels.length;
  const examples = loadGoEmotions(dir);
  const store = featureStore(
    examples.map((e) => e.text),
    features,
  );
  const truth = examples.map((e) => {
    const y = new Uint8Array(k);
    for (const id of e.ids) {
      const at = labels.indexOf(names[id] as string);
      if (at >= 0) y[at] = 1;
    }
    return y;
  });
  const rows = (split: string) => examples.flatMap((e, i) => (e.split === split ? [i] : []));
  const model = fitEmotions(store, truth, rows("train"), k, s, features);
  model.labels = labels;
  const scratch = new Int32Array(8192);
  const scores = (rs: number[]) => {
    const out = rs.map(() => new Float64Array(k));
    for (const [i, r] of rs.entries()) emotionScores(model, view(store, r, s.bits, scratch), out[i] as Float64Array);
    return out;
  };
  const dev = rows("dev");
  const devScores = scores(dev);
  for (let e = 0; e < k; e++) {
    let best = 0.5;
    let bestF = -1;
    for (let t = 0.02; t < 0.95; t += 0.01) {
      let tp = 0;
      let fp = 0;
      let fn = 0;
      for (const [i, r] of dev.entries()) {
        const p = ((devScores[i] as Float64Array)[e] as number) >= t;
        const y = (truth[r] as Uint8Array)[e] === 1;
        if (p && y) tp++;
        else if (p) fp++;
        else if (y) fn++;
      }
      if (f1(tp, fp, fn) > bestF) {
        bestF = f1(tp, fp, fn);
        best = Number(t.toFixed(2));
      }
    }
    model.thresholds.push(best);
  }
  const test = rows("test");
  const testScores = scores(test);
  const perF1: number[] = [];
  const support: number[] = [];
  for (let e = 0; e < k; e++) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const [i, r] of test.entries()) {
      const p = ((testScores[i] as Float64Array)[e] as number) >= (model.thresholds[e] as number);
      const y = (truth[r] as Uint8Array)[e] === 1;
      if (p && y) tp++;
      else if (p) fp++;
      else if (y) fn++;
    }
    perF1.push(f1(tp, fp, fn));
    support.push(tp + fn);
  }
  const bytes = encodeEmotions(model);
  const macroF1 = perF1.reduce((a, b) => a + b, 0) / k;
  console.log(`emotions: macro-F1 ${macroF1.toFixed(3)} on GoEmotions test (${bytes.length} bytes)`);
  return {
    report: { labels, thresholds: model.thresholds, f1: perF1, support, macroF1, bits: s.bits, bytes: bytes.length },
    bytes,
  };
}
