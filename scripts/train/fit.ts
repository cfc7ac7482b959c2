/**
 * Fitting the sentiment model: features of every text computed once (features.ts, the served
 * code), weighted multinomial logistic regression over them, int8 quantisation, and the
 * calibration (a gain per class and biases) fitted by maximum likelihood on logits of texts from
 * corpora the scoring model was not trained on. Deterministic: seeded order, no clock.
 */
import {
  DENSE,
  type FeatureBuffer,
  type FeatureOptions,
  featureBuffer,
  featurize,
  VADER_DENSE,
} from "../../src/adapters/classifier/features.js";
import { CLASSES, calibrated, type LinearModel, logits } from "../../src/adapters/classifier/linear-model.js";
import { readFlag } from "../../src/adapters/classifier/readable.js";
import { UNREADABLE_SCORES } from "../../src/adapters/classifier/trained.js";
import { scoresFromCompound } from "../../src/adapters/classifier/vader.js";
import { polarityScores, vaderScoresInto } from "../../src/adapters/classifier/vader-scores.js";
import { type Example, rng } from "./data.js";

export interface Settings {
  /** Hashed buckets: 2^bits. */
  bits: number;
  features: FeatureOptions;
  epochs: number;
  /** Plain SGD step of the sparse weights. */
  sparseLr: number;
  l2: number;
  /** Corpus weight ∝ size^−balance: 0 = every text alike, 1 = every corpus alike. */
  balance: number;
  /** Share of the calibration fit given to texts scored in-domain (the rest: across corpora). */
  calMix: number;
  /** `balance` of the calibration fit's rows. */
  calBalance: number;
  /**
   * The calibration fit weighs a corpus's positive and negative texts at their natural shares
   * (together two thirds of the corpus, neutral the other third); false: every class alike.
   */
  calPolarShares: boolean;
  /**
   * The model is the mean of the full model and the models trained each without one of its
   * corpora (those the calibration is fitted with): still one linear model, as fast and as large.
   */
  ensemble: boolean;
  /** Share of the sparse linear features dropped at random from each training text (0 = none). */
  dropout: number;
  /**
   * Each corpus's own copy of every weight while training (Daumé's "frustratingly easy" domain
   * adaptation), which soaks up what holds in that corpus only; the model keeps the shared weights.
   * 0 = none; else the copies' feature value (1: as the shared ones).
   */
  adapt: number;
  /** Seed of the training order (and of dropout): runs differing only in it show the noise. */
  seed: number;
  /** The mean of this many models, trained with seeds seed, seed + 1, …: still one linear model. */
  seeds: number;
  /** The sparse step decays linearly to 0 over the epochs after the first. */
  decay: boolean;
  /**
   * Tail averaging (Polyak–Ruppert): the weights are the mean of the iterates over the last this
   * share of the sparse steps (0.2 of 6 epochs: the last one); 0 = the last iterate.
   */
  average: number;
}

/** The mean of linear models' weights (float, before quantisation): one linear model. */
export function meanModel(models: readonly LinearModel[]): LinearModel {
  return {
    ...(models[0] as LinearModel),
    weights: meanOf(
      Float32Array,
      models.map((m) => m.weights),
    ),
    dense: meanOf(
      Float64Array,
      models.map((m) => m.dense),
    ),
  };
}

/** The element-wise mean of equally long arrays (the weights of models trained alike), as an `Out`. */
export function meanOf<T extends Float32Array | Float64Array>(
  Out: new (length: number) => T,
  arrays: readonly ArrayLike<number>[],
): T {
  const out = new Out((arrays[0] as ArrayLike<number>).length);
  for (const a of arrays) for (let j = 0; j < out.length; j++) out[j] = (out[j] as number) + (a[j] as number);
  for (let j = 0; j < out.length; j++) out[j] = (out[j] as number) / arrays.length;
  return out;
}

/** Sparse and dense features of every text, hashed into 2^MAX_BITS buckets (masked down when trained). */
export interface Store {
  offsets: Int32Array;
  index: Int32Array;
  value: Float32Array;
  /** DENSE then VADER_DENSE per text. */
  dense: Float64Array;
  flagged: Uint8Array;
}

export const MAX_BITS = 20;
export const STRIDE = DENSE.length + VADER_DENSE.length;

export function featureStore(texts: readonly string[], opts: FeatureOptions): Store {
  const buf = featureBuffer();
  const offsets = new Int32Array(texts.length + 1);
  let index = new Int32Array(texts.length * 48);
  let value = new Float32Array(texts.length * 48);
  const dense = new Float64Array(texts.length * STRIDE);
  const flagged = new Uint8Array(texts.length);
  let at = 0;
  for (const [i, text] of texts.entries()) {
    featurize(text, MAX_BITS, buf, opts);
    vaderScoresInto(text, buf.dense, DENSE.length);
    if (at + buf.n > index.length) {
      const grow = (n: number) => Math.max(n * 2, at + buf.n);
      const ni = new Int32Array(grow(index.length));
      ni.set(index);
      index = ni;
      const nv = new Float32Array(ni.length);
      nv.set(value);
      value = nv;
    }
    index.set(buf.index.subarray(0, buf.n), at);
    value.set(buf.value.subarray(0, buf.n), at);
    at += buf.n;
    offsets[i + 1] = at;
    dense.set(buf.dense.subarray(0, STRIDE), i * STRIDE);
    flagged[i] = readFlag(text) ? 1 : 0;
  }
  return { offsets, index: index.slice(0, at), value: value.slice(0, at), dense, flagged };
}

/** Text i of the store as a FeatureBuffer for `logits`, its buckets masked to 2^bits. */
export function view(store: Store, i: number, bits: number, scratch: Int32Array): FeatureBuffer {
  const from = store.offsets[i] as number;
  const to = store.offsets[i + 1] as number;
  const mask = (1 << bits) - 1;
  for (let k = from; k < to; k++) scratch[k - from] = (store.index[k] as number) & mask;
  return {
    index: scratch,
    value: store.value.subarray(from, to),
    n: to - from,
    dense: store.dense.subarray(i * STRIDE, (i + 1) * STRIDE),
    negation: new Float64Array(0),
  };
}

/**
 * Each corpus weighs size^−balance, each class within a corpus alike (with `polarShares`: neutral
 * a third, positive and negative two thirds at their natural shares); mean weight 1.
 */
export function rowWeights(
  examples: readonly Example[],
  rows: readonly number[],
  balance: number,
  polarShares = false,
): Float64Array {
  const count = new Map<string, number>();
  const corpusCount = new Map<string, number>();
  for (const r of rows) {
    const e = examples[r] as Example;
    const k = `${e.corpus}/${e.label}`;
    count.set(k, (count.get(k) ?? 0) + 1);
    corpusCount.set(e.corpus, (corpusCount.get(e.corpus) ?? 0) + 1);
  }
  const raw = rows.map((r) => {
    const e = examples[r] as Example;
    const n = corpusCount.get(e.corpus) as number;
    const classes = [0, 1, 2].filter((c) => count.has(`${e.corpus}/${c}`)).length;
    const polar = (count.get(`${e.corpus}/0`) ?? 0) + (count.get(`${e.corpus}/2`) ?? 0);
    const share =
      polarShares && e.label !== 1 && polar > 0
        ? (classes - (count.has(`${e.corpus}/1`) ? 1 : 0)) / polar
        : 1 / (count.get(`${e.corpus}/${e.label}`) as number);
    return n ** -balance * ((n / classes) * share);
  });
  const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
  return Float64Array.from(raw, (w) => w / mean);
}

export const newModel = (s: Settings): LinearModel => ({
  bits: s.bits,
  weights: new Float32Array((1 << s.bits) * CLASSES),
  scale: [1, 1, 1],
  dense: new Float64Array(STRIDE * CLASSES),
  vader: true,
  features: s.features,
  temperature: 1,
  gain: [1, 1, 1],
  bias: [0, 0, 0],
});

/**
 * Weighted multinomial logistic regression: AdaGrad on the dense weights, plain SGD with L2 on
 * the sparse ones; the first epoch fits the dense (lexicon and VADER) features alone.
 */
export function train(store: Store, examples: readonly Example[], rows: readonly number[], s: Settings): LinearModel {
  if (s.seeds <= 1) return trainOnce(store, examples, rows, s);
  const runs = Array.from({ length: s.seeds }, (_, k) => trainOnce(store, examples, rows, { ...s, seed: s.seed + k }));
  return meanModel(runs);
}

function trainOnce(store: Store, examples: readonly Example[], rows: readonly number[], s: Settings): LinearModel {
  const [last, averaged] = trainRun(store, examples, rows, s, s.average > 0 ? [s.average] : []);
  return (averaged ?? last) as LinearModel;
}

/**
 * Iterate means over the last `share` of `steps` sparse steps, kept lazily: a sparse weight's
 * value counts for every step it held it, added when it changes and at the end.
 */
function tailMeans(model: LinearModel, steps: number, shares: readonly number[]) {
  const w = model.weights;
  const since = new Int32Array(w.length);
  const windows = shares.map((share) => ({
    start: Math.floor(steps * (1 - share)),
    sum: new Float64Array(w.length),
    dense: new Float64Array(model.dense.length),
  }));
  const held = (j: number, t: number) => {
    const last = since[j] as number;
    for (const win of windows) {
      const n = t - Math.max(last, win.start + 1);
      if (n > 0) win.sum[j] = (win.sum[j] as number) + (w[j] as number) * n;
    }
  };
  return {
    /** Before weight j changes at sparse step t (1-based). */
    change(j: number, t: number) {
      held(j, t);
      since[j] = t;
    },
    /** After sparse step t. */
    stepped(t: number) {
      for (const win of windows)
        if (t > win.start)
          for (let d = 0; d < win.dense.length; d++)
            win.dense[d] = (win.dense[d] as number) + (model.dense[d] as number);
    },
    models(): LinearModel[] {
      for (let j = 0; j < w.length; j++) held(j, steps + 1);
      return windows.map((win) => {
        const n = steps - win.start;
        return {
          ...model,
          weights: Float32Array.from(win.sum, (x) => x / n),
          dense: Float64Array.from(win.dense, (x) => x / n),
        };
      });
    },
  };
}

/** One training run: its last iterate, then its tail means over the last `shares` of the sparse steps. */
export function trainRun(
  store: Store,
  examples: readonly Example[],
  rows: readonly number[],
  s: Settings,
  shares: readonly number[] = [],
): LinearModel[] {
  const model = newModel(s);
  const w = model.weights;
  const dense = model.dense;
  const dg2 = new Float64Array(dense.length);
  const weight = rowWeights(examples, rows, s.balance);
  const order = Int32Array.from(rows.keys());
  const draw = rng(s.seed);
  const z = new Float64Array(3);
  const scratch = new Int32Array(8192);
  const keptValue = new Float32Array(8192);
  const grad = [0, 0, 0];
  const steps = (s.epochs - 1) * order.length;
  const corpusIndex = new Map<string, number>();
  for (const r of rows) {
    const c = (examples[r] as Example).corpus;
    if (!corpusIndex.has(c)) corpusIndex.set(c, corpusIndex.size);
  }
  const adapt = s.adapt > 0 ? corpusCopies(corpusIndex.size, s) : undefined;
  const tail = shares.length > 0 ? tailMeans(model, steps, shares) : undefined;
  let seen = 0;
  let t = 0;
  for (let epoch = 0; epoch < s.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(draw() * (i + 1));
      const t = order[i] as number;
      order[i] = order[j] as number;
      order[j] = t;
    }
    for (const o of order) {
      const r = rows[o] as number;
      const f = view(store, r, s.bits, scratch);
      if (epoch === 0) f.n = 0;
      else if (s.dropout > 0) {
        let kept = 0;
        for (let k = 0; k < f.n; k++) {
          if (draw() < s.dropout) continue;
          scratch[kept] = f.index[k] as number;
          keptValue[kept++] = (f.value[k] as number) / (1 - s.dropout);
        }
        f.n = kept;
        f.value = keptValue;
      }
      const sparseLr = s.decay && epoch > 0 ? s.sparseLr * Math.max(0, 1 - seen++ / steps) : s.sparseLr;
      if (epoch > 0) t++;
      logits(model, f, z);
      const own = corpusIndex.get((examples[r] as Example).corpus) as number;
      if (adapt) adapt.add(own, f, z);
      calibrated(model, z);
      const y = (examples[r] as Example).label;
      const sw = weight[o] as number;
      for (let c = 0; c < 3; c++) grad[c] = sw * ((z[c] as number) - (c === y ? 1 : 0));
      for (let k = 0; k < f.n; k++) {
        const base = (f.index[k] as number) * 3;
        const x = f.value[k] as number;
        for (let c = 0; c < 3; c++) {
          const at = base + c;
          tail?.change(at, t);
          w[at] = (w[at] as number) - sparseLr * ((grad[c] as number) * x + s.l2 * (w[at] as number));
        }
      }
      if (adapt) adapt.step(own, f, grad);
      for (let d = 0; d < STRIDE; d++) {
        const x = f.dense[d] as number;
        if (x === 0) continue;
        for (let c = 0; c < 3; c++) {
          const at = d * 3 + c;
          const gr = (grad[c] as number) * x;
          dg2[at] = (dg2[at] as number) + gr * gr;
          dense[at] = (dense[at] as number) - (0.2 * gr) / Math.sqrt((dg2[at] as number) + 1e-8);
        }
      }
      if (epoch > 0) tail?.stepped(t);
    }
  }
  return [model, ...(tail?.models() ?? [])];
}

/** Each corpus's copy of the sparse and dense weights (Settings.adapt), used in training only. */
function corpusCopies(corpora: number, s: Settings) {
  const size = (1 << s.bits) * CLASSES;
  const sparse = new Float32Array(corpora * size);
  const dense = new Float64Array(corpora * STRIDE * CLASSES);
  const g2 = new Float64Array(dense.length);
  const a = s.adapt;
  return {
    add(k: number, f: FeatureBuffer, z: Float64Array) {
      for (let j = 0; j < f.n; j++) {
        const base = k * size + (f.index[j] as number) * 3;
        const x = a * (f.value[j] as number);
        for (let c = 0; c < 3; c++) z[c] = (z[c] as number) + (sparse[base + c] as number) * x;
      }
      for (let d = 0; d < STRIDE; d++) {
        const x = a * (f.dense[d] as number);
        for (let c = 0; c < 3; c++) z[c] = (z[c] as number) + (dense[(k * STRIDE + d) * 3 + c] as number) * x;
      }
    },
    step(k: number, f: FeatureBuffer, grad: readonly number[]) {
      for (let j = 0; j < f.n; j++) {
        const base = k * size + (f.index[j] as number) * 3;
        const x = a * (f.value[j] as number);
        for (let c = 0; c < 3; c++)
          sparse[base + c] =
            (sparse[base + c] as number) - s.sparseLr * ((grad[c] as number) * x + s.l2 * (sparse[base + c] as number));
      }
      for (let d = 0; d < STRIDE; d++) {
        const x = a * (f.dense[d] as number);
        if (x === 0) continue;
        for (let c = 0; c < 3; c++) {
          const at = (k * STRIDE + d) * 3 + c;
          const gr = (grad[c] as number) * x;
          g2[at] = (g2[at] as number) + gr * gr;
          dense[at] = (dense[at] as number) - (0.2 * gr) / Math.sqrt((g2[at] as number) + 1e-8);
        }
      }
    },
  };
}

/** Int8 weights with a per-class scale mapping the 99.99th percentile of |w| to 127 (the few beyond are clipped). */
export function quantise(model: LinearModel): LinearModel {
  const w = model.weights;
  const q = new Int8Array(w.length);
  const scale: [number, number, number] = [1, 1, 1];
  for (let c = 0; c < 3; c++) {
    const mags: number[] = [];
    for (let j = c; j < w.length; j += 3) if (w[j] !== 0) mags.push(Math.abs(w[j] as number));
    mags.sort((a, b) => a - b);
    const top = mags[Math.floor(mags.length * 0.9999)] ?? 1;
    const sc = top / 127 || 1;
    scale[c] = sc;
    for (let j = c; j < w.length; j += 3) q[j] = Math.max(-127, Math.min(127, Math.round((w[j] as number) / sc)));
  }
  return { ...model, weights: q, scale };
}

/** Raw logits (before calibration) of `rows`. */
export function rawLogits(model: LinearModel, store: Store, rows: readonly number[]): Float64Array {
  const out = new Float64Array(rows.length * 3);
  const z = new Float64Array(3);
  const scratch = new Int32Array(8192);
  for (const [k, r] of rows.entries()) {
    logits(model, view(store, r, model.bits, scratch), z);
    out.set(z, k * 3);
  }
  return out;
}

/**
 * Calibration by weighted maximum likelihood on raw logits z: p ∝ exp(g_c · z_c + b_c), neutral's
 * bias fixed at 0 (vector scaling). Convex; plain gradient descent.
 */
export function fitCalibration(
  z: Float64Array,
  labels: ArrayLike<number>,
  weight: ArrayLike<number>,
): { gain: [number, number, number]; bias: [number, number, number] } {
  const n = labels.length;
  const g = [1, 1, 1];
  const b = [0, 0, 0];
  const p = [0, 0, 0];
  for (let it = 0; it < 1500; it++) {
    const gg = [0, 0, 0];
    const gb = [0, 0, 0];
    for (let k = 0; k < n; k++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let c = 0; c < 3; c++) {
        p[c] = (z[k * 3 + c] as number) * (g[c] as number) + (b[c] as number);
        m = Math.max(m, p[c] as number);
      }
      let sum = 0;
      for (let c = 0; c < 3; c++) {
        p[c] = Math.exp((p[c] as number) - m);
        sum += p[c] as number;
      }
      const sw = (weight[k] as number) / n;
      const y = labels[k] as number;
      for (let c = 0; c < 3; c++) {
        const r = sw * ((p[c] as number) / sum - (c === y ? 1 : 0));
        gg[c] = (gg[c] as number) + r * (z[k * 3 + c] as number);
        gb[c] = (gb[c] as number) + r;
      }
    }
    for (let c = 0; c < 3; c++) {
      g[c] = (g[c] as number) - 0.5 * (gg[c] as number);
      if (c !== 1) b[c] = (b[c] as number) - 0.5 * (gb[c] as number);
    }
  }
  return { gain: g as [number, number, number], bias: b as [number, number, number] };
}

/** What the served model answers for `rows`: calibrated probabilities, or UNREADABLE_SCORES for a flagged text. */
export function probabilities(model: LinearModel, store: Store, rows: readonly number[]): Float64Array {
  const out = rawLogits(model, store, rows);
  const u = UNREADABLE_SCORES;
  for (const [k, r] of rows.entries()) {
    const z = out.subarray(k * 3, k * 3 + 3);
    if (store.flagged[r]) z.set([u.positive, u.neutral, u.negative]);
    else calibrated(model, z);
  }
  return out;
}

/** VADER as served (CLASSIFIER_MODEL=vader) on `texts`. */
export function vaderProbabilities(texts: readonly string[]): Float64Array {
  const out = new Float64Array(texts.length * 3);
  for (const [i, t] of texts.entries()) {
    const s = scoresFromCompound(polarityScores(t).compound);
    out.set([s.positive, s.neutral, s.negative], i * 3);
  }
  return out;
}
