/**
 * Extra held-out sets for `npm run eval:sentiment -- --extra DIR` (or SENTIMENT_EXTRA_DIR): every
 * `*GroundTruth.txt` / `*GroundTruth.tsv` in DIR, mean human ratings in VADER's format
 * (`id<TAB>rating<TAB>text`, labels as in train-data.ts), scored by the shipped model and by VADER
 * side by side with issue 20's goals checked per set. Evaluation only: nothing here trains, and
 * the files are read where they are (docs/model-card.md, *Unseen domains*). A text that is also in
 * the training corpora is left out of a set (so VADER's own tweets and Amazon files, which sit
 * beside its movie and news files, score nothing).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Scores } from "../src/ports/classifier.js";
import { type Labelled, ratedTexts } from "./train-data.js";
import { type Metrics, score } from "./train-metrics.js";
import { goalChecks, goalRows, HEAD, row } from "./train-report.js";

export interface ExtraSet {
  name: string;
  /** Texts with a rating, not in the training corpora. */
  examples: (Labelled & { text: string })[];
  /** Texts with a rating left out because the training corpora hold them too. */
  seen: number;
}

/** The extra sets of `dir`, by file name; texts in `seen` (the training corpora's texts) left out. */
export function loadExtraSets(dir: string, seen: ReadonlySet<string>): ExtraSet[] {
  return readdirSync(dir)
    .filter((f) => /GroundTruth\.(txt|tsv)$/.test(f))
    .sort()
    .map((f) => {
      const all = ratedTexts(readFileSync(join(dir, f), "utf8"));
      const examples = all.filter((e) => !seen.has(e.text.trim()));
      return { name: f.replace(/_?GroundTruth\.(txt|tsv)$/, ""), examples, seen: all.length - examples.length };
    });
}

export interface ExtraResult {
  name: string;
  seen: number;
  model: Metrics;
  vader: Metrics;
}

type Scorer = (text: string) => Scores;

const triples = (texts: readonly { text: string }[], f: Scorer) => {
  const p = new Float64Array(texts.length * 3);
  for (const [i, e] of texts.entries()) {
    const s = f(e.text);
    p.set([s.positive, s.neutral, s.negative], i * 3);
  }
  return p;
};

/** Each set with at least one held-out text, scored by `model` and `vader`. */
export function scoreExtraSets(sets: readonly ExtraSet[], model: Scorer, vader: Scorer): ExtraResult[] {
  return sets
    .filter((s) => s.examples.length > 0)
    .map((s) => ({
      name: s.name,
      seen: s.seen,
      model: score(triples(s.examples, model), s.examples),
      vader: score(triples(s.examples, vader), s.examples),
    }));
}

/**
 * `--diag`: where a set's errors come from. True class shares against the model's mean
 * probabilities and argmax shares; per predicted class its mean confidence against its accuracy;
 * and by length (words) the 3-class and binary accuracy, log-loss and ECE of both models.
 */
export function extraDiagnosis(set: ExtraSet, model: Scorer, vader: Scorer): string[] {
  const ex = set.examples;
  const [pm, pv] = [triples(ex, model), triples(ex, vader)];
  const top = (p: Float64Array, i: number) => {
    const [a, b, c] = [p[i * 3] as number, p[i * 3 + 1] as number, p[i * 3 + 2] as number];
    return a >= b && a >= c ? 0 : b >= c ? 1 : 2;
  };
  const f2 = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(" / ");
  const share = (pred: (i: number) => boolean) => ex.filter((_, i) => pred(i)).length / ex.length;
  const meanP = (p: Float64Array) =>
    [0, 1, 2].map((c) => p.filter((_, i) => i % 3 === c).reduce((a, b) => a + b, 0) / ex.length);
  const out = [
    `${set.name}: ${ex.length} texts; shares positive / neutral / negative: true ${f2([0, 1, 2].map((c) => share((i) => ex[i]?.label === c)))}, model mean p ${f2(meanP(pm))}, model argmax ${f2([0, 1, 2].map((c) => share((i) => top(pm, i) === c)))}, VADER argmax ${f2([0, 1, 2].map((c) => share((i) => top(pv, i) === c)))}`,
  ];
  for (const [c, name] of ["positive", "neutral", "negative"].entries()) {
    const idx = [...ex.keys()].filter((i) => top(pm, i) === c);
    if (!idx.length) continue;
    const conf = idx.reduce((a, i) => a + (pm[i * 3 + c] as number), 0) / idx.length;
    const right = idx.filter((i) => ex[i]?.label === c).length / idx.length;
    out.push(
      `  model says ${name}: ${idx.length} texts, mean confidence ${conf.toFixed(3)}, right ${right.toFixed(3)}`,
    );
  }
  const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
  for (const [lo, hi] of [
    [1, 10],
    [11, 20],
    [21, 30],
    [31, Number.POSITIVE_INFINITY],
  ] as const) {
    const idx = [...ex.keys()].filter((i) => {
      const w = words(ex[i]?.text ?? "");
      return w >= lo && w <= hi;
    });
    if (!idx.length) continue;
    const sub = idx.map((i) => ex[i] as Labelled);
    const pick = (p: Float64Array) =>
      Float64Array.from(idx.flatMap((i) => [p[i * 3], p[i * 3 + 1], p[i * 3 + 2]] as number[]));
    const [a, b] = [score(pick(pm), sub), score(pick(pv), sub)];
    const fig = (m: Metrics) =>
      `${(100 * m.accuracy.value).toFixed(1)} / ${(100 * m.binaryAccuracy.value).toFixed(1)} / ${m.logLoss.value.toFixed(3)} / ${m.ece.value.toFixed(3)}`;
    out.push(
      `  ${lo}–${hi === Number.POSITIVE_INFINITY ? "" : hi} words: ${idx.length} texts, 3-class / binary / log-loss / ECE: model ${fig(a)}, VADER ${fig(b)}`,
    );
  }
  return out;
}

/** The sets as the model card shows them: both models' figures, then the goals per set. */
export function extraMarkdown(
  results: readonly ExtraResult[],
  skipped: readonly ExtraSet[],
  modelName: string,
): string {
  const met = results.map((r) => `${r.name} ${goalChecks(r.model, r.vader).filter((g) => g.met).length} of 4`);
  return [
    `${modelName}, extra held-out sets (evaluation only; Δ VADER against VADER as served on the same texts):`,
    "",
    HEAD.replace("| corpus |", "| set |"),
    ...results.map((r) => row(r.name, r.model, r.vader)),
    "",
    "VADER as served (`CLASSIFIER_MODEL=vader`) on the same texts:",
    "",
    HEAD.replace("| corpus |", "| set |"),
    ...results.map((r) => row(r.name, r.vader, r.vader)),
    "",
    "Issue 20's goals per set:",
    "",
    "| set | goal | model vs goal | |",
    "| --- | --- | --- | --- |",
    ...results.flatMap((r) => goalRows(r.name, r.model, r.vader)),
    "",
    `Goals met: ${met.join("; ")}.`,
    ...results.filter((r) => r.seen > 0).map((r) => `${r.name}: ${r.seen} texts left out (in the training corpora).`),
    ...skipped.map((s) => `${s.name}: skipped, all ${s.seen} texts are in the training corpora.`),
    "",
  ].join("\n");
}
