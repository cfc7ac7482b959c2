/**
 * The emotion model (src/adapters/classifier/emotions.ts): one logistic output per GoEmotions
 * emotion over hashed words and character 3-grams (EMOTION_FEATURES), the lexicon features and
 * VADER's scores, trained by AdaGrad on GoEmotions train and dev, the mean of three models trained
 * in three seeded orders (still one linear model). A threshold per emotion (the one with the best
 * F1) is fitted on GoEmotions dev scored out of fold: each half of dev by a model trained on train
 * and the other half. Scored on GoEmotions test, which neither the weights nor the thresholds saw.
 */
import { type EmotionModel, emotionScores, encodeEmotions } from "../../src/adapters/classifier/emotions.js";
import type { FeatureOptions } from "../../src/adapters/classifier/features.js";
import { goemotionsLabels, loadGoEmotions, rng } from "./data.js";
import { featureStore, meanOf, STRIDE, type Store, view } from "./fit.js";
import type { EmotionReport } from "./report.js";

export interface EmotionSettings {
  bits: number;
  epochs: number;
  lr: number;
  l2: number;
  /** Cap of an emotion's positive-text weight √(negatives / positives); 1: every text alike (best on dev). */
  cap: number;
  /** Seed of the training order. */
  seed: number;
  /** The mean of this many models, trained in the orders seed, seed + 1, …: still one linear model. */
  seeds: number;
  /** The step decays linearly to 0 over this many final epochs (0: constant). */
  decay: number;
  /**
   * Trained on train and dev, the thresholds fitted on dev scored out of fold (each half of dev
   * by a model trained on train and the other half); else trained on train only.
   */
  withDev: boolean;
}

export const EMOTION_SETTINGS: EmotionSettings = {
  bits: 17,
  epochs: 6,
  lr: 0.15,
  l2: 1e-7,
  cap: 1,
  seed: 43,
  seeds: 3,
  decay: 0,
  withDev: true,
};
/** Character 3-grams carry the shared stems of rare emotions' words (embarrass-, nervous-, griev-); bigrams only crowd the buckets. */
export const EMOTION_FEATURES: FeatureOptions = { negation: "window", bigrams: false, charGrams: true };

export interface FloatWeights {
  w: Float32Array;
  dense: Float64Array;
}

function fitOnce(
  store: Store,
  truth: Uint8Array[],
  rows: number[],
  k: number,
  s: EmotionSettings,
  seed: number,
): FloatWeights {
  const size = k << s.bits;
  const w = new Float32Array(size);
  const g2 = new Float32Array(size);
  const dense = new Float64Array(STRIDE * k);
  const dg2 = new Float64Array(STRIDE * k);
  const pos = new Array<number>(k).fill(0);
  for (const r of rows) for (let e = 0; e < k; e++) pos[e] = (pos[e] as number) + (truth[r]?.[e] as number);
  const posWeight = pos.map((p) => Math.min(s.cap, Math.sqrt((rows.length - p) / Math.max(1, p))));
  const order = [...rows];
  const scratch = new Int32Array(8192);
  const draw = rng(seed);
  const z = new Float64Array(k);
  const decaySteps = s.decay * rows.length;
  let left = s.epochs * rows.length;
  for (let epoch = 0; epoch < s.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(draw() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const r of order) {
      const lr = decaySteps > 0 ? s.lr * Math.min(1, left-- / decaySteps) : s.lr;
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
          w[at] = (w[at] as number) - (lr * gr) / Math.sqrt((g2[at] as number) + 1e-8);
        }
      }
      for (let d = 0; d < STRIDE; d++) {
        const x = f.dense[d] as number;
        if (x === 0) continue;
        for (let e = 0; e < k; e++) {
          const at = d * k + e;
          const gr = (z[e] as number) * x;
          dg2[at] = (dg2[at] as number) + gr * gr;
          dense[at] = (dense[at] as number) - (lr * gr) / Math.sqrt((dg2[at] as number) + 1e-8);
        }
      }
    }
  }
  return { w, dense };
}

/** The `s.seeds` trainings on GoEmotions train, in the orders s.seed, s.seed + 1, … */
export function emotionRuns(data: EmotionData, s: EmotionSettings, rows = splitRows(data, "train")): FloatWeights[] {
  return Array.from({ length: s.seeds }, (_, i) =>
    fitOnce(data.store, data.truth, rows, data.labels.length, s, s.seed + i),
  );
}

const splitRows = (data: EmotionData, split: string) => data.splits.flatMap((e, i) => (e === split ? [i] : []));

/** The mean of the runs' weights, quantised. */
function meanModel(
  runs: readonly FloatWeights[],
  labels: string[],
  s: EmotionSettings,
  features: FeatureOptions,
): EmotionModel {
  const k = labels.length;
  const size = k << s.bits;
  const w = meanOf(
    Float32Array,
    runs.map((r) => r.w),
  );
  const dense = meanOf(
    Float64Array,
    runs.map((r) => r.dense),
  );
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
  return { bits: s.bits, features, labels, weights: q, scale, dense, thresholds: [] };
}

/** F1 of emotion `e` over the texts `at` (indices into `scores` and `rows`) at threshold `t`. */
function f1At(scores: Float64Array[], rows: number[], at: number[], truth: Uint8Array[], e: number, t: number): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const i of at) {
    const p = ((scores[i] as Float64Array)[e] as number) >= t;
    const y = (truth[rows[i] as number] as Uint8Array)[e] === 1;
    if (p && y) tp++;
    else if (p) fp++;
    else if (y) fn++;
  }
  return tp ? (2 * tp) / (2 * tp + fp + fn) : 0;
}

/** The threshold (0.02 … 0.94) with emotion `e`'s best F1 over the texts `at`. */
function bestThreshold(scores: Float64Array[], rows: number[], at: number[], truth: Uint8Array[], e: number): number {
  let best = 0.5;
  let bestF = -1;
  for (let c = 2; c < 95; c++) {
    const f = f1At(scores, rows, at, truth, e, c / 100);
    if (f > bestF) {
      bestF = f;
      best = c / 100;
    }
  }
  return best;
}

/** GoEmotions' texts, their features and their emotions: computed once for any number of trainings. */
export interface EmotionData {
  labels: string[];
  features: FeatureOptions;
  store: Store;
  truth: Uint8Array[];
  splits: string[];
}

export function emotionData(dir: string, features: FeatureOptions = EMOTION_FEATURES): EmotionData {
  const names = goemotionsLabels(dir);
  const labels = names.filter((n) => n !== "neutral");
  const examples = loadGoEmotions(dir);
  const store = featureStore(
    examples.map((e) => e.text),
    features,
  );
  const truth = examples.map((e) => {
    const y = new Uint8Array(labels.length);
    for (const id of e.ids) {
      const at = labels.indexOf(names[id] as string);
      if (at >= 0) y[at] = 1;
    }
    return y;
  });
  return { labels, features, store, truth, splits: examples.map((e) => e.split) };
}

export function trainEmotions(
  data: EmotionData,
  s: EmotionSettings = EMOTION_SETTINGS,
  runs?: FloatWeights[],
): { report: EmotionReport; bytes: Buffer } {
  const { labels, features, store, truth } = data;
  const k = labels.length;
  const train = splitRows(data, "train");
  const dev = splitRows(data, "dev");
  const devAt = [...dev.keys()];
  const halves = [devAt.filter((i) => i % 2 === 0), devAt.filter((i) => i % 2 === 1)] as const;
  const model = meanModel(runs ?? emotionRuns(data, s, s.withDev ? [...train, ...dev] : train), labels, s, features);
  // with dev in training, each half of dev is scored by a model trained on train and the other half
  const trainAnd = (half: readonly number[]) => [...train, ...half.map((i) => dev[i] as number)];
  const devModels = s.withDev
    ? [halves[1], halves[0]].map((other) => meanModel(emotionRuns(data, s, trainAnd(other)), labels, s, features))
    : [model, model];
  const scratch = new Int32Array(8192);
  const scores = (rs: number[], by: (i: number) => EmotionModel) => {
    const out = rs.map(() => new Float64Array(k));
    for (const [i, r] of rs.entries()) emotionScores(by(i), view(store, r, s.bits, scratch), out[i] as Float64Array);
    return out;
  };
  const devScores = scores(dev, (i) => devModels[i % 2] as EmotionModel);
  for (let e = 0; e < k; e++) model.thresholds.push(bestThreshold(devScores, dev, devAt, truth, e));
  // dev's two halves, each scored at the thresholds fitted on the other: a figure to choose settings by
  let devF1 = 0;
  for (const [h, half] of halves.entries()) {
    for (let e = 0; e < k; e++) {
      const t = bestThreshold(devScores, dev, halves[1 - h] as number[], truth, e);
      devF1 += f1At(devScores, dev, half, truth, e, t) / (2 * k);
    }
  }
  const test = splitRows(data, "test");
  const testScores = scores(test, () => model);
  const testAt = [...test.keys()];
  const perF1 = model.thresholds.map((t, e) => f1At(testScores, test, testAt, truth, e, t));
  const support = labels.map((_, e) => test.filter((r) => (truth[r] as Uint8Array)[e] === 1).length);
  const bytes = encodeEmotions(model);
  const macroF1 = perF1.reduce((a, b) => a + b, 0) / k;
  console.log(
    `emotions ${JSON.stringify(s)}: macro-F1 ${macroF1.toFixed(4)} on GoEmotions test (dev halves, thresholds from the other: ${devF1.toFixed(4)}; ${bytes.length} bytes)`,
  );
  return {
    report: { labels, thresholds: model.thresholds, f1: perF1, support, macroF1, bits: s.bits, bytes: bytes.length },
    bytes,
  };
}
