/**
 * The shipped trained model and VADER side by side on the three corpora in
 * ../shared/data/sentiment (SENTIMENT_DATA_DIR), then VADER's own calibration on its two
 * human-rated sets (ratings −4…+4). Usage:
 *   npm run eval:sentiment            both models per corpus (test split: texts the trained model
 *                                     never saw; all: mostly its training data), then VADER per set
 *   npm run eval:sentiment -- --fit   refit the calibration (T, ε): pooled 5-fold cross-validation
 *                                     and leave-one-set-out, every figure on texts the fit never saw
 *   npm run eval:sentiment -- --extra DIR   (or SENTIMENT_EXTRA_DIR=DIR) also every *GroundTruth.txt
 *                                     / .tsv in DIR (held-out rating files in the same format, e.g.
 *                                     VADER's movie and news snippets: docs/model-card.md), both
 *                                     models side by side with issue 20's goals per set (eval-extra.ts);
 *                                     with --diag also where each set's errors come from
 * 3-class truth: rating > 0.5 positive, < −0.5 negative, else neutral.
 * Binary truth: rating > 0 positive, < 0 negative (ratings of exactly 0 are left out); the
 * prediction is positive when its score is at least the negative one (VADER's compound ≥ 0).
 * "found" is binary accuracy on the texts where VADER found any sentiment (compound ≠ 0).
 * ECE: expected calibration error of the top label's confidence, 15 equal-width bins (train-metrics.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TrainedClassifier } from "../src/adapters/classifier/trained.js";
import { SMOOTHING, scoresFromCompound, TEMPERATURE, vaderLabel } from "../src/adapters/classifier/vader.js";
import { polarityScores } from "../src/adapters/classifier/vader-scores.js";
import { LABELS, type Label } from "../src/ports/classifier.js";
import { type ExtraResult, extraDiagnosis, extraMarkdown, loadExtraSets, scoreExtraSets } from "./eval-extra.js";
import { CORPORA, type Example, loadCorpora, sentimentDir } from "./train-data.js";
import { ECE_BINS, eceBin, eceOf, type Interval, score } from "./train-metrics.js";

interface Item {
  rating: number;
  compound: number;
}

interface Calibration {
  temperature: number;
  smoothing: number;
}

const dir = sentimentDir();

function load(file: string): Item[] {
  return readFileSync(join(dir, file), "utf8")
    .split("\n")
    .map((line) => line.split("\t"))
    .filter((cols) => cols.length >= 3 && cols[1] !== undefined && Number.isFinite(Number(cols[1])))
    .map((cols) => ({ rating: Number(cols[1]), compound: polarityScores(cols.slice(2).join("\t")).compound }));
}

const truth3 = (r: number): Label => (r > 0.5 ? "positive" : r < -0.5 ? "negative" : "neutral");

/** Metrics of `items`, each scored with `cal` (or its own calibration: out-of-fold scoring). */
export function evaluate(items: Item[], cal: Calibration | ((i: number) => Calibration)) {
  let right3 = 0;
  let rightBin = 0;
  let nBin = 0;
  let nFound = 0;
  let rightFound = 0;
  let logLoss = 0;
  let brier = 0;
  const bins = Array.from({ length: ECE_BINS }, () => [0, 0, 0]);
  for (const [i, it] of items.entries()) {
    const c = typeof cal === "function" ? cal(i) : cal;
    const scores = scoresFromCompound(it.compound, c.temperature, c.smoothing);
    const truth = truth3(it.rating);
    const label = vaderLabel(it.compound);
    if (label === truth) right3++;
    logLoss -= Math.log(Math.max(1e-12, scores[truth]));
    for (const l of LABELS) brier += (scores[l] - (l === truth ? 1 : 0)) ** 2;
    const bin = bins[eceBin(scores[label])] as number[];
    bin[0] = (bin[0] as number) + 1;
    bin[1] = (bin[1] as number) + scores[label];
    if (label === truth) bin[2] = (bin[2] as number) + 1;
    if (it.rating !== 0) {
      nBin++;
      if (scores.positive >= scores.negative === it.rating > 0) rightBin++;
      if (it.compound !== 0) {
        nFound++;
        if (scores.positive > scores.negative === it.rating > 0) rightFound++;
      }
    }
  }
  const n = items.length;
  const ece = eceOf(bins, n);
  return {
    n,
    acc3: right3 / n,
    nBin,
    accBin: rightBin / nBin,
    nFound,
    accFound: rightFound / nFound,
    logLoss: logLoss / n,
    brier: brier / n,
    ece,
  };
}

/** Maximum likelihood (T, ε) on `items` over a grid. */
function fitCalibration(items: Item[]): Calibration {
  let best = { temperature: 1, smoothing: 0, logLoss: Number.POSITIVE_INFINITY };
  for (let t = 1; t <= 8.001; t += 0.1) {
    for (let e = 0; e <= 0.3001; e += 0.01) {
      const { logLoss } = evaluate(items, { temperature: t, smoothing: e });
      if (logLoss < best.logLoss) best = { temperature: t, smoothing: e, logLoss };
    }
  }
  return { temperature: Math.round(best.temperature * 10) / 10, smoothing: Math.round(best.smoothing * 100) / 100 };
}

/** Probability triples of `examples` by the shipped trained model and by VADER as served. */
function sideBySide() {
  const trained = new TrainedClassifier();
  const corpora = loadCorpora(dir);
  const f = (i: Interval, k = 100) => (k * i.value).toFixed(k === 100 ? 1 : 3).padStart(6);
  console.log(`${trained.model.name} ${trained.model.version} vs VADER (as served with CLASSIFIER_MODEL=vader)`);
  console.log("corpus      part   texts | 3-class       | binary        | log-loss        | ECE");
  for (const c of CORPORA) {
    for (const part of ["test", "all"] as const) {
      const ex = corpora[c].filter((e: Example) => part === "all" || e.split === "test");
      const pt = new Float64Array(ex.length * 3);
      const pv = new Float64Array(ex.length * 3);
      for (const [i, e] of ex.entries()) {
        const s = trained.classifyOne(e.text).scores;
        pt.set([s.positive, s.neutral, s.negative], i * 3);
        const v = scoresFromCompound(polarityScores(e.text).compound);
        pv.set([v.positive, v.neutral, v.negative], i * 3);
      }
      const [m, v] = [score(pt, ex), score(pv, ex)];
      console.log(
        `${c.padEnd(11)} ${part.padEnd(5)} ${String(ex.length).padStart(6)} | ${f(m.accuracy)} ${f(v.accuracy)} | ${f(m.binaryAccuracy)} ${f(v.binaryAccuracy)} | ${f(m.logLoss, 1)} ${f(v.logLoss, 1)} | ${f(m.ece, 1)} ${f(v.ece, 1)}`,
      );
    }
  }
  console.log("(each cell: trained, VADER; leave-one-corpus-out figures: docs/model-card.md)");
  const extraDir = extraArg();
  if (!extraDir) return;
  const seen = new Set(CORPORA.flatMap((c) => corpora[c].map((e) => e.text.trim())));
  const sets = loadExtraSets(extraDir, seen);
  const vader = (t: string) => scoresFromCompound(polarityScores(t).compound);
  const results: ExtraResult[] = scoreExtraSets(sets, (t) => trained.classifyOne(t).scores, vader);
  const name = `${trained.model.name} ${trained.model.version}`;
  console.log(`\nExtra held-out sets in ${extraDir}\n`);
  console.log(
    extraMarkdown(
      results,
      sets.filter((s) => s.examples.length === 0),
      name,
    ),
  );
  if (process.argv.includes("--diag"))
    for (const s of sets.filter((x) => x.examples.length > 0))
      console.log(extraDiagnosis(s, (t) => trained.classifyOne(t).scores, vader).join("\n"));
}

/** `--extra DIR`, `--extra=DIR` or SENTIMENT_EXTRA_DIR: a directory of extra held-out rating files. */
function extraArg(): string | undefined {
  const at = process.argv.indexOf("--extra");
  if (at >= 0) return process.argv[at + 1];
  return process.argv.find((a) => a.startsWith("--extra="))?.slice(8) ?? process.env.SENTIMENT_EXTRA_DIR;
}

sideBySide();

const files = readdirSync(dir)
  .filter((f) => f.endsWith(".tsv"))
  .sort();
const sets = Object.fromEntries(files.map((f) => [f.replace(/_GroundTruth\.tsv$/, ""), load(f)]));

const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7);
function table(title: string, rows: [string, ReturnType<typeof evaluate>][]) {
  console.log(`\n${title}`);
  console.log("set                    texts  3-class   binary (texts)   found (texts)  log-loss  Brier   ECE");
  for (const [name, r] of rows) {
    console.log(
      `${name.padEnd(22)} ${String(r.n).padStart(5)}  ${pct(r.acc3)}  ${pct(r.accBin)} (${r.nBin})  ${pct(r.accFound)} (${r.nFound})  ${r.logLoss.toFixed(3)}    ${r.brier.toFixed(3)}  ${r.ece.toFixed(3)}`,
    );
  }
}

if (process.argv.includes("--fit")) {
  const names = Object.keys(sets);
  // Leave one set out: fit on the others, score the one left out.
  table(
    "leave-one-set-out (fitted on the other set, scored on this one)",
    names.map((held) => {
      const cal = fitCalibration(names.filter((n) => n !== held).flatMap((n) => sets[n] ?? []));
      console.log(`  fit without ${held}: T=${cal.temperature} ε=${cal.smoothing}`);
      return [held, evaluate(sets[held] ?? [], cal)];
    }),
  );
  // Pooled 5-fold cross-validation: each text scored by a fit that never saw it.
  const pooled = names.flatMap((n) => (sets[n] ?? []).map((it, i) => ({ set: n, fold: i % 5, it })));
  const oof = new Map<string, { set: string; it: Item; cal: Calibration }[]>();
  for (let k = 0; k < 5; k++) {
    const cal = fitCalibration(pooled.filter((p) => p.fold !== k).map((p) => p.it));
    console.log(`  fold ${k}: T=${cal.temperature} ε=${cal.smoothing}`);
    for (const p of pooled.filter((q) => q.fold === k)) {
      const list = oof.get(p.set) ?? [];
      list.push({ set: p.set, it: p.it, cal });
      oof.set(p.set, list);
    }
  }
  table(
    "pooled 5-fold cross-validation, out of fold",
    names.map((n) => {
      const rows = oof.get(n) ?? [];
      const whole = evaluate(
        rows.map((r) => r.it),
        (i) => (rows[i] as (typeof rows)[number]).cal,
      );
      return [n, whole];
    }),
  );
  const all = fitCalibration(pooled.map((p) => p.it));
  console.log(`\nfit on everything (what ships): T=${all.temperature} ε=${all.smoothing}`);
}

table(
  "before: T=3.7 fitted on tweets only, no smoothing",
  Object.entries(sets).map(([n, items]) => [n, evaluate(items, { temperature: 3.7, smoothing: 0 })]),
);
table(
  `served: T=${TEMPERATURE} ε=${SMOOTHING} (in-sample; see --fit for out-of-sample)`,
  Object.entries(sets).map(([n, items]) => [n, evaluate(items, { temperature: TEMPERATURE, smoothing: SMOOTHING })]),
);
