/**
 * The three training corpora in ../shared/data/sentiment (read in place, never copied), their
 * labels and the fixed train / calibration / test split that the trainer, `npm run eval:sentiment`
 * and the CI accuracy check share.
 *
 * Labels: VADER tweets and Amazon snippets carry a mean human rating in [−4, 4]: 3-class
 * positive > 0.5, negative < −0.5, else neutral; binary at 0 (ratings of exactly 0 left out).
 * GoEmotions: positive when every emotion is on the positive side, negative when every one is on
 * the negative side (ambiguous emotions — confusion, curiosity, realization, surprise — and
 * `neutral` beside them do not change that), neutral when the only label is `neutral`. Comments
 * with emotions from both sides, or only ambiguous ones, have no clear polarity: left out of
 * training and evaluation (an experiment reading ambiguous-only as neutral is in the report).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const CORPORA = ["tweets", "amazon", "goemotions"] as const;
export type Corpus = (typeof CORPORA)[number];
export type Split = "train" | "calibration" | "test";

/** Index into LABELS: 0 positive, 1 neutral, 2 negative. */
export type LabelIndex = 0 | 1 | 2;

export interface Example {
  corpus: Corpus;
  split: Split;
  text: string;
  label: LabelIndex;
  /** Binary truth (positive / negative), or null when the text has none (rating 0, GoEmotions neutral). */
  binary: 0 | 2 | null;
}

/** What scoring needs of a text: its 3-class and binary truth (train-metrics.ts). */
export type Labelled = Pick<Example, "label" | "binary">;

export interface LoadOptions {
  /** How GoEmotions comments with only ambiguous emotions are used: left out (default) or as neutral. */
  ambiguous?: "drop" | "neutral";
}

/** SENTIMENT_DATA_DIR, else `<repo>/../shared/data/sentiment` (the repo sits beside `shared`). */
export function sentimentDir(): string {
  const repo = fileURLToPath(new URL("..", import.meta.url));
  return resolve(process.env.SENTIMENT_DATA_DIR ?? join(repo, "..", "shared", "data", "sentiment"));
}

export const hasSentimentData = (dir = sentimentDir()): boolean =>
  existsSync(join(dir, "tweets_GroundTruth.tsv")) && existsSync(join(dir, "goemotions", "labels.txt"));

const POSITIVE = new Set(
  "admiration amusement approval caring desire excitement gratitude joy love optimism pride relief".split(" "),
);
const NEGATIVE = new Set(
  "anger annoyance disappointment disapproval disgust embarrassment fear grief nervousness remorse sadness".split(" "),
);

/** A seeded generator (mulberry32): every split and shuffle is reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const label3 = (r: number): LabelIndex => (r > 0.5 ? 0 : r < -0.5 ? 2 : 1);

/**
 * The texts of a file of mean human ratings in VADER's format, `id<TAB>rating<TAB>text` a line
 * (LF or CRLF line ends, UTF-8), with their 3-class and binary truth; lines without a numeric
 * rating are skipped.
 */
export function ratedTexts(content: string): (Labelled & { text: string })[] {
  const out: (Labelled & { text: string })[] = [];
  for (const line of content.replace(/^\uFEFF/, "").split("\n")) {
    const cols = line.replace(/\r$/, "").split("\t");
    if (cols.length < 3) continue;
    const rating = Number(cols[1]);
    if (!Number.isFinite(rating)) continue;
    out.push({ text: cols.slice(2).join("\t"), label: label3(rating), binary: rating > 0 ? 0 : rating < 0 ? 2 : null });
  }
  return out;
}

/** VADER's tweets or Amazon snippets: 80 % train, 10 % calibration, 10 % test, by a seeded draw per line. */
function rated(dir: string, file: string, corpus: Corpus): Example[] {
  const draw = rng(corpus === "tweets" ? 11 : 12);
  return ratedTexts(readFileSync(join(dir, file), "utf8")).map((t) => {
    const u = draw();
    return { corpus, split: u < 0.8 ? "train" : u < 0.9 ? "calibration" : "test", ...t };
  });
}

/** GoEmotions' own splits: train → train, dev → calibration, test → test. */
function goemotions(dir: string, ambiguous: "drop" | "neutral"): Example[] {
  const names = readFileSync(join(dir, "goemotions", "labels.txt"), "utf8")
    .trim()
    .split("\n");
  const out: Example[] = [];
  for (const [file, split] of [
    ["train.tsv", "train"],
    ["dev.tsv", "calibration"],
    ["test.tsv", "test"],
  ] as const) {
    for (const line of readFileSync(join(dir, "goemotions", file), "utf8").split("\n")) {
      const cols = line.split("\t");
      if (cols.length < 2 || !cols[0]) continue;
      const emotions = (cols[1] as string).split(",").map((id) => names[Number(id)]);
      const pos = emotions.some((e) => e !== undefined && POSITIVE.has(e));
      const neg = emotions.some((e) => e !== undefined && NEGATIVE.has(e));
      let label: LabelIndex;
      if (pos && neg) continue;
      if (pos) label = 0;
      else if (neg) label = 2;
      else if (emotions.every((e) => e === "neutral")) label = 1;
      else if (ambiguous === "neutral") label = 1;
      else continue;
      out.push({ corpus: "goemotions", split, text: cols[0], label, binary: label === 1 ? null : label });
    }
  }
  return out;
}

export function loadCorpora(dir = sentimentDir(), opts: LoadOptions = {}): Record<Corpus, Example[]> {
  return {
    tweets: rated(dir, "tweets_GroundTruth.tsv", "tweets"),
    amazon: rated(dir, "amazonReviewSnippets_GroundTruth.tsv", "amazon"),
    goemotions: goemotions(dir, opts.ambiguous ?? "drop"),
  };
}
