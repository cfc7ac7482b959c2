import { DEFAULT_FEATURES, DENSE, type FeatureBuffer, type FeatureOptions, featurize } from "./features.js";
import { vaderScoresInto } from "./vader-scores.js";

/** Class order of every weight row and probability triple: the port's LABELS. */
export const CLASSES = 3;

/**
 * Multinomial logistic regression over `features.ts`: sparse weights for 2^bits hashed buckets
 * (int8 per class with a per-class scale when shipped; float while training), dense weights, and
 * the calibration fitted afterwards on held-out training data (logits · gain / temperature + bias).
 */
export interface LinearModel {
  bits: number;
  /** weights[bucket * 3 + class] · scale[class] */
  weights: Int8Array | Float32Array;
  scale: [number, number, number];
  /** dense[feature * 3 + class]: DENSE, then VADER_DENSE when `vader` (or a trainer experiment's extras). */
  dense: Float64Array;
  /** Stacked on VADER: its four scores follow DENSE in the dense features. */
  vader?: boolean;
  /** The sparse features it was trained on (DEFAULT_FEATURES when absent). */
  features?: FeatureOptions;
  temperature: number;
  /** Per-class gain on the logits (vector scaling); [1, 1, 1] when only a temperature is fitted. */
  gain: [number, number, number];
  bias: [number, number, number];
}

/** Raw logits of the features in `buf` (before calibration), written into `out`; every dense weight counts. */
export function logits(model: LinearModel, buf: FeatureBuffer, out: Float64Array): void {
  let a = 0;
  let b = 0;
  let c = 0;
  const w = model.weights;
  for (let k = 0; k < buf.n; k++) {
    const j = (buf.index[k] as number) * 3;
    const v = buf.value[k] as number;
    a += (w[j] as number) * v;
    b += (w[j + 1] as number) * v;
    c += (w[j + 2] as number) * v;
  }
  a *= model.scale[0];
  b *= model.scale[1];
  c *= model.scale[2];
  const d = model.dense;
  const nd = d.length / 3;
  for (let f = 0; f < nd; f++) {
    const x = buf.dense[f] as number;
    a += (d[f * 3] as number) * x;
    b += (d[f * 3 + 1] as number) * x;
    c += (d[f * 3 + 2] as number) * x;
  }
  out[0] = a;
  out[1] = b;
  out[2] = c;
}

/** Calibrated probabilities (positive, neutral, negative) from raw logits, in place. */
export function calibrated(model: LinearModel, z: Float64Array): void {
  const t = model.temperature;
  const g = model.gain;
  const a = ((z[0] as number) * g[0]) / t + model.bias[0];
  const b = ((z[1] as number) * g[1]) / t + model.bias[1];
  const c = ((z[2] as number) * g[2]) / t + model.bias[2];
  const m = Math.max(a, b, c);
  const ea = Math.exp(a - m);
  const eb = Math.exp(b - m);
  const ec = Math.exp(c - m);
  const s = ea + eb + ec;
  z[0] = ea / s;
  z[1] = eb / s;
  z[2] = ec / s;
}

/** Calibrated probabilities of one text. */
export function predict(model: LinearModel, text: string, buf: FeatureBuffer, out: Float64Array): void {
  featurize(text, model.bits, buf, model.features ?? DEFAULT_FEATURES);
  if (model.vader) vaderScoresInto(text, buf.dense, DENSE.length);
  logits(model, buf, out);
  calibrated(model, out);
}
