/**
 * Scores of probability triples (positive, neutral, negative) against 3-class and binary truth:
 * accuracy (Wilson 95 % interval), macro-F1, log-loss, Brier and ECE (percentile bootstrap 95 %
 * intervals, 200 seeded resamples), binary accuracy (positive when p(positive) ≥ p(negative)) and
 * balanced binary accuracy (the mean of the positive and the negative texts' binary accuracy, so a
 * model gains nothing from leaning toward the set's more frequent polarity; bootstrap interval).
 * ECE: the standard top-label ECE (Guo et al. 2017): confidence of the predicted class against
 * its accuracy in 15 equal-width bins ((m−1)/15, m/15], weighted by the share of texts in each.
 */
import { type Labelled, rng } from "./data.js";

/** Bins of the standard top-label ECE. */
export const ECE_BINS = 15;

/** The bin of a top-label confidence: ((m−1)/M, m/M], so a confidence of exactly 1 is in the last. */
export const eceBin = (conf: number): number => Math.max(0, Math.min(ECE_BINS - 1, Math.ceil(conf * ECE_BINS) - 1));

/** Top-label ECE from per-bin [count, summed confidence, right] over n texts. */
export const eceOf = (bins: readonly (readonly number[])[], n: number): number =>
  bins.reduce((s, b) => s + ((b[0] as number) ? Math.abs((b[1] as number) - (b[2] as number)) / n : 0), 0);

export interface Interval {
  value: number;
  lo: number;
  hi: number;
}

export interface Metrics {
  n: number;
  accuracy: Interval;
  macroF1: Interval;
  logLoss: Interval;
  brier: Interval;
  ece: Interval;
  binaryN: number;
  binaryAccuracy: Interval;
  balancedBinary: Interval;
}

function wilson(right: number, n: number): Interval {
  if (n === 0) return { value: Number.NaN, lo: Number.NaN, hi: Number.NaN };
  const z = 1.96;
  const p = right / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { value: p, lo: c - h, hi: c + h };
}

const argmax = (p: ArrayLike<number>, i: number): number => {
  const a = p[i * 3] as number;
  const b = p[i * 3 + 1] as number;
  const c = p[i * 3 + 2] as number;
  return a >= b && a >= c ? 0 : b >= c ? 1 : 2;
};

/** Point values of the resampled metrics over the rows `rows` (indices into examples). */
function point(probs: ArrayLike<number>, ex: readonly Labelled[], rows: ArrayLike<number>) {
  const tp = [0, 0, 0];
  const fp = [0, 0, 0];
  const fn = [0, 0, 0];
  let ll = 0;
  let brier = 0;
  const polar = [0, 0, 0, 0]; // positive texts, right; negative texts, right
  const bins = Array.from({ length: ECE_BINS }, () => [0, 0, 0]);
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r] as number;
    const y = (ex[i] as Labelled).label;
    const k = argmax(probs, i);
    if (k === y) tp[k] = (tp[k] as number) + 1;
    else {
      fp[k] = (fp[k] as number) + 1;
      fn[y] = (fn[y] as number) + 1;
    }
    ll -= Math.log(Math.max(1e-12, probs[i * 3 + y] as number));
    for (let c = 0; c < 3; c++) brier += ((probs[i * 3 + c] as number) - (c === y ? 1 : 0)) ** 2;
    const b = (ex[i] as Labelled).binary;
    if (b !== null) {
      const at = b === 0 ? 0 : 2;
      polar[at] = (polar[at] as number) + 1;
      if ((probs[i * 3] as number) >= (probs[i * 3 + 2] as number) === (b === 0))
        polar[at + 1] = (polar[at + 1] as number) + 1;
    }
    const conf = probs[i * 3 + k] as number;
    const bin = bins[eceBin(conf)] as number[];
    bin[0] = (bin[0] as number) + 1;
    bin[1] = (bin[1] as number) + conf;
    bin[2] = (bin[2] as number) + (k === y ? 1 : 0);
  }
  const n = rows.length;
  let f1 = 0;
  for (let c = 0; c < 3; c++) {
    const d = 2 * (tp[c] as number) + (fp[c] as number) + (fn[c] as number);
    f1 += d ? (2 * (tp[c] as number)) / d : 0;
  }
  const ece = eceOf(bins, n);
  const recall = (at: number) =>
    (polar[at] as number) ? (polar[at + 1] as number) / (polar[at] as number) : Number.NaN;
  return { macroF1: f1 / 3, logLoss: ll / n, brier: brier / n, ece, balancedBinary: (recall(0) + recall(2)) / 2 };
}

export function score(probs: ArrayLike<number>, ex: readonly Labelled[], seed = 7): Metrics {
  const n = ex.length;
  let right = 0;
  let binN = 0;
  let binRight = 0;
  for (let i = 0; i < n; i++) {
    const e = ex[i] as Labelled;
    if (argmax(probs, i) === e.label) right++;
    if (e.binary !== null) {
      binN++;
      const pos = (probs[i * 3] as number) >= (probs[i * 3 + 2] as number);
      if (pos === (e.binary === 0)) binRight++;
    }
  }
  const all = Int32Array.from({ length: n }, (_, i) => i);
  const whole = point(probs, ex, all);
  const draw = rng(seed);
  const reps: ReturnType<typeof point>[] = [];
  const rows = new Int32Array(n);
  for (let b = 0; b < 200; b++) {
    for (let i = 0; i < n; i++) rows[i] = Math.floor(draw() * n);
    reps.push(point(probs, ex, rows));
  }
  const interval = (key: keyof typeof whole): Interval => {
    const v = reps.map((r) => r[key]).sort((a, b) => a - b);
    return { value: whole[key], lo: v[4] as number, hi: v[195] as number };
  };
  return {
    n,
    accuracy: wilson(right, n),
    macroF1: interval("macroF1"),
    logLoss: interval("logLoss"),
    brier: interval("brier"),
    ece: interval("ece"),
    binaryN: binN,
    binaryAccuracy: wilson(binRight, binN),
    balancedBinary: interval("balancedBinary"),
  };
}
