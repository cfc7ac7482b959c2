/**
 * Does a small learned layer over several lexicon scores beat plain VADER on texts it was not
 * fitted on? Usage: node --import tsx scripts/eval-learned-layer.ts [--dir=../shared/data/sentiment] [--lambda=0.001]
 *
 * Features per text: VADER's polarity scores (compound, pos, neu, neg), AFINN-165 via `sentiment`
 * (score = sum, comparative = sum / tokens), wink-sentiment's normalizedScore, and a bias.
 * Model: 3-class multinomial logistic regression, features standardised on the training split,
 * full-batch gradient descent with L2 (bias not penalised). Label = argmax.
 * Baselines on exactly the same held-out texts, label = VADER's rule on compound:
 *   VADER served  T=3.5, ε=0.07 from vader.ts; fitted on both sets pooled, so its two
 *                 calibration parameters HAVE seen the held-out texts (favours VADER).
 *   VADER refit   (T, ε) refitted by the same grid as eval-sentiment.ts on the training split only.
 * Splits: train tweets → test Amazon, train Amazon → test tweets, and pooled 5-fold out of fold
 * (fold = index mod 5 within each set, as in eval-sentiment.ts).
 * Truth and metrics as scripts/eval-sentiment.ts: rating > 0.5 positive, < −0.5 negative, else
 * neutral; log-loss of the true class; ECE of the top label's confidence over 15 equal-width bins (train-metrics.ts).
 * Δ columns: learned − VADER served, paired per text, ± 1.96 standard errors.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { SMOOTHING, scoresFromCompound, TEMPERATURE, vaderLabel } from "../src/adapters/classifier/vader.js";
import { polarityScores } from "../src/adapters/classifier/vader-scores.js";
import { LABELS, type Label } from "../src/ports/classifier.js";
import { ECE_BINS, eceBin, eceOf } from "./train-metrics.js";

const require = createRequire(import.meta.url);
const Sentiment = require("sentiment") as new () => { analyze(t: string): { score: number; comparative: number } };
const wink = require("wink-sentiment") as (t: string) => { score: number; normalizedScore: number };
const afinn = new Sentiment();

const dir = resolve(process.argv.find((a) => a.startsWith("--dir="))?.slice(6) ?? "../shared/data/sentiment");
const LAMBDA = Number(process.argv.find((a) => a.startsWith("--lambda="))?.slice(9) ?? 1e-3);

interface Item {
  set: string;
  truth: number; // index into LABELS
  compound: number;
  x: number[]; // raw features, no bias
}

const truth3 = (r: number): Label => (r > 0.5 ? "positive" : r < -0.5 ? "negative" : "neutral");
const FEATURES = ["compound", "pos", "neu", "neg", "afinnSum", "afinnComparative", "winkNormalized"];

function load(file: string, set: string): Item[] {
  return readFileSync(join(dir, file), "utf8")
    .split("\n")
    .map((line) => line.split("\t"))
    .filter((cols) => cols.length >= 3 && cols[1] !== undefined && Number.isFinite(Number(cols[1])))
    .map((cols) => {
      const text = cols.slice(2).join("\t");
      const v = polarityScores(text);
      const a = afinn.analyze(text);
      const w = wink(text);
      return {
        set,
        truth: LABELS.indexOf(truth3(Number(cols[1]))),
        compound: v.compound,
        x: [v.compound, v.pos, v.neu, v.neg, a.score, a.comparative, w.normalizedScore],
      };
    });
}

// ---- multinomial logistic regression -------------------------------------------------------
interface Model {
  mean: number[];
  sd: number[];
  w: number[][]; // K × (d + 1), last column bias
  cols: number[];
}

function softmax(z: number[]): number[] {
  const m = Math.max(...z);
  const e = z.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

function design(m: Pick<Model, "mean" | "sd" | "cols">, x: number[]): number[] {
  return [...m.cols.map((c, j) => ((x[c] as number) - (m.mean[j] as number)) / (m.sd[j] as number)), 1];
}

function predict(m: Model, x: number[]): number[] {
  const z = design(m, x);
  return m.w.map((row) => row.reduce((s, wj, j) => s + wj * (z[j] as number), 0));
}

function fitLogistic(train: Item[], cols: number[], lambda = LAMBDA, iters = 3000, lr = 0.5): Model {
  const n = train.length;
  const mean = cols.map((c) => train.reduce((s, it) => s + (it.x[c] as number), 0) / n);
  const sd = cols.map((c, j) => {
    const v = train.reduce((s, it) => s + ((it.x[c] as number) - (mean[j] as number)) ** 2, 0) / n;
    return Math.sqrt(v) || 1;
  });
  const Z = train.map((it) => design({ mean, sd, cols }, it.x));
  const d = cols.length + 1;
  const w = LABELS.map(() => new Array<number>(d).fill(0));
  let gnorm = 0;
  for (let t = 0; t < iters; t++) {
    const g = LABELS.map(() => new Array<number>(d).fill(0));
    for (const [i, z] of Z.entries()) {
      const p = softmax(w.map((row) => row.reduce((s, wj, j) => s + wj * (z[j] as number), 0)));
      for (let k = 0; k < 3; k++) {
        const r = (p[k] as number) - (k === (train[i] as Item).truth ? 1 : 0);
        const gk = g[k] as number[];
        for (let j = 0; j < d; j++) gk[j] = (gk[j] as number) + (r * (z[j] as number)) / n;
      }
    }
    gnorm = 0;
    for (let k = 0; k < 3; k++) {
      const wk = w[k] as number[];
      const gk = g[k] as number[];
      for (let j = 0; j < d; j++) {
        const gj = (gk[j] as number) + (j < d - 1 ? lambda * (wk[j] as number) : 0);
        gnorm += gj * gj;
        wk[j] = (wk[j] as number) - lr * gj;
      }
    }
  }
  if (Math.sqrt(gnorm) > 1e-4)
    console.warn(`  warning: gradient norm ${Math.sqrt(gnorm).toExponential(2)} after ${iters}`);
  return { mean, sd, w, cols };
}

// ---- VADER calibration refit (same grid as eval-sentiment.ts) -------------------------------
interface Cal {
  temperature: number;
  smoothing: number;
}
const vaderProbs = (c: number, cal: Cal) => {
  const s = scoresFromCompound(c, cal.temperature, cal.smoothing);
  return LABELS.map((l) => s[l]);
};
function fitCal(items: Item[]): Cal {
  let best = { temperature: 1, smoothing: 0, ll: Number.POSITIVE_INFINITY };
  for (let t = 1; t <= 8.001; t += 0.1) {
    for (let e = 0; e <= 0.3001; e += 0.01) {
      const ll = items.reduce(
        (s, it) =>
          s - Math.log(Math.max(1e-12, vaderProbs(it.compound, { temperature: t, smoothing: e })[it.truth] as number)),
        0,
      );
      if (ll < best.ll) best = { temperature: t, smoothing: e, ll };
    }
  }
  return { temperature: Math.round(best.temperature * 10) / 10, smoothing: Math.round(best.smoothing * 100) / 100 };
}

// ---- metrics --------------------------------------------------------------------------------
interface Pred {
  label: number;
  probs: number[];
}
function metrics(items: Item[], preds: Pred[]) {
  const bins = Array.from({ length: ECE_BINS }, () => [0, 0, 0]);
  const correct: number[] = [];
  const ll: number[] = [];
  for (const [i, it] of items.entries()) {
    const p = preds[i] as Pred;
    const ok = p.label === it.truth ? 1 : 0;
    correct.push(ok);
    ll.push(-Math.log(Math.max(1e-12, p.probs[it.truth] as number)));
    const conf = p.probs[p.label] as number;
    const b = bins[eceBin(conf)] as number[];
    b[0] = (b[0] as number) + 1;
    b[1] = (b[1] as number) + conf;
    b[2] = (b[2] as number) + ok;
  }
  const n = items.length;
  const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
  const ece = eceOf(bins, n);
  return { n, acc: mean(correct), logLoss: mean(ll), ece, correct, ll };
}
function pairedDelta(a: number[], b: number[]) {
  const d = a.map((v, i) => v - (b[i] as number));
  const m = d.reduce((s, v) => s + v, 0) / d.length;
  const sd = Math.sqrt(d.reduce((s, v) => s + (v - m) ** 2, 0) / (d.length - 1));
  return { m, half: (1.96 * sd) / Math.sqrt(d.length) };
}

const learnedPred = (m: Model, it: Item): Pred => {
  const probs = softmax(predict(m, it.x));
  return { label: probs.indexOf(Math.max(...probs)), probs };
};
const vaderPred = (it: Item, cal: Cal): Pred => ({
  label: LABELS.indexOf(vaderLabel(it.compound)),
  probs: vaderProbs(it.compound, cal),
});

// ---- run ------------------------------------------------------------------------------------
const sets: Record<string, Item[]> = {
  tweets: load("tweets_GroundTruth.tsv", "tweets"),
  amazon: load("amazonReviewSnippets_GroundTruth.tsv", "amazon"),
};
for (const [name, items] of Object.entries(sets)) {
  const dist = LABELS.map(
    (l, k) => `${l} ${((100 * items.filter((it) => it.truth === k).length) / items.length).toFixed(1)}%`,
  );
  console.log(`${name}: ${items.length} texts (${dist.join(", ")})`);
}

const ALL = FEATURES.map((_, j) => j);
const VADER_ONLY = [0, 1, 2, 3];
const served: Cal = { temperature: TEMPERATURE, smoothing: SMOOTHING };

interface Split {
  name: string;
  test: Item[];
  learned: Pred[];
  learnedVader: Pred[];
  refit: Pred[];
  note: string;
}
const splits: Split[] = [];

for (const [trainName, testName] of [
  ["tweets", "amazon"],
  ["amazon", "tweets"],
] as const) {
  const train = sets[trainName] as Item[];
  const test = sets[testName] as Item[];
  const m = fitLogistic(train, ALL);
  const mv = fitLogistic(train, VADER_ONLY);
  const cal = fitCal(train);
  splits.push({
    name: `train ${trainName} → test ${testName}`,
    test,
    learned: test.map((it) => learnedPred(m, it)),
    learnedVader: test.map((it) => learnedPred(mv, it)),
    refit: test.map((it) => vaderPred(it, cal)),
    note: `refit T=${cal.temperature} ε=${cal.smoothing}`,
  });
}

// Pooled 5-fold, out of fold.
const pooled = Object.values(sets).flatMap((items) => items.map((it, i) => ({ it, fold: i % 5 })));
const oof = new Map<Item, { l: Pred; lv: Pred; r: Pred }>();
const foldCals: string[] = [];
for (let k = 0; k < 5; k++) {
  const train = pooled.filter((p) => p.fold !== k).map((p) => p.it);
  const m = fitLogistic(train, ALL);
  const mv = fitLogistic(train, VADER_ONLY);
  const cal = fitCal(train);
  foldCals.push(`${cal.temperature}/${cal.smoothing}`);
  for (const p of pooled.filter((q) => q.fold === k)) {
    oof.set(p.it, { l: learnedPred(m, p.it), lv: learnedPred(mv, p.it), r: vaderPred(p.it, cal) });
  }
}
for (const name of ["tweets", "amazon", "both"]) {
  const test = name === "both" ? pooled.map((p) => p.it) : (sets[name] as Item[]);
  splits.push({
    name: `pooled 5-fold OOF: ${name}`,
    test,
    learned: test.map((it) => oof.get(it)?.l as Pred),
    learnedVader: test.map((it) => oof.get(it)?.lv as Pred),
    refit: test.map((it) => oof.get(it)?.r as Pred),
    note: `refit T/ε per fold ${foldCals.join(", ")}`,
  });
}

const f3 = (x: number) => x.toFixed(3);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const sgn = (x: number, f: (v: number) => string) => (x >= 0 ? "+" : "−") + f(Math.abs(x));
console.log(`\nL2 λ=${LAMBDA}; features: ${FEATURES.join(", ")} + bias`);
console.log(
  "\n| held-out set | n | model | 3-class acc | log-loss | ECE | Δacc vs served (95% CI) | Δlog-loss vs served (95% CI) |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const s of splits) {
  const base = metrics(
    s.test,
    s.test.map((it) => vaderPred(it, served)),
  );
  const rows: [string, Pred[] | null][] = [
    ["VADER served (T=3.5, ε=0.07)", null],
    [`VADER refit on train (${s.name.startsWith("pooled") ? "per fold" : s.note.slice(6)})`, s.refit],
    ["learned, VADER features only", s.learnedVader],
    ["learned, VADER+AFINN+wink", s.learned],
  ];
  for (const [label, preds] of rows) {
    const r = preds ? metrics(s.test, preds) : base;
    const da = preds ? pairedDelta(r.correct, base.correct) : null;
    const dl = preds ? pairedDelta(r.ll, base.ll) : null;
    console.log(
      `| ${s.name} | ${r.n} | ${label} | ${pct(r.acc)} | ${f3(r.logLoss)} | ${f3(r.ece)} | ${
        da ? `${sgn(da.m, pct)} ± ${pct(da.half)}` : "—"
      } | ${dl ? `${sgn(dl.m, f3)} ± ${f3(dl.half)}` : "—"} |`,
    );
  }
}
console.log(`\nVADER refit per fold (T/ε): ${foldCals.join(", ")}`);
