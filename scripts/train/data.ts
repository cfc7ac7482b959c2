/**
 * The six licensed sentiment corpora in ../shared/data/sentiment (read in place, never copied),
 * each mapped to positive / neutral / negative, with the fixed train / dev / test split that the
 * trainer, `npm run eval:sentiment` and the CI accuracy check share. The mapping of each corpus is
 * written down in docs/model-card.md (Data); in short:
 *
 *   tweets, amazon  VADER's mean human rating r in [−4, 4]: r > 0.5 positive, r < −0.5 negative,
 *                   else neutral; binary truth is the sign of r (r = 0 has none). Seeded 80/10/10.
 *   goemotions      positive when every emotion is on the positive side, negative when every one is
 *                   on the negative side (confusion, curiosity, realization, surprise and `neutral`
 *                   beside them change nothing), neutral when the only label is `neutral`; both
 *                   sides, or ambiguous emotions only: no polarity, left out. Its own splits.
 *   fintweets       Bearish → negative, Bullish → positive, Neutral → neutral. sent_train is train,
 *                   sent_valid is test.
 *   newsmtsc        sentences whose targets all carry one polarity (2 negative, 4 neutral,
 *                   6 positive); sentences with targets of different polarity are left out.
 *                   train.jsonl is train, devtest_mt and devtest_rw are test.
 *   xed             joy or trust → positive, anger, disgust, fear or sadness → negative (surprise
 *                   and anticipation beside them change nothing), neu_en.txt → neutral; both
 *                   sides, or surprise / anticipation only: left out. Seeded 90/10.
 *
 * Neutral texts have no binary truth. Texts the model cannot read (readable.ts) stay in: they are
 * scored as served.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";

export const CORPORA = ["tweets", "amazon", "goemotions", "fintweets", "newsmtsc", "xed"] as const;
export type Corpus = (typeof CORPORA)[number];
/** The corpora left out one at a time; VADER's own two sets are reported, never a goal. */
export const HELD_OUT = ["goemotions", "fintweets", "newsmtsc", "xed"] as const satisfies readonly Corpus[];
export type Split = "train" | "dev" | "test";

/** Index into LABELS: 0 positive, 1 neutral, 2 negative. */
export type LabelIndex = 0 | 1 | 2;

export interface Example {
  corpus: Corpus;
  split: Split;
  text: string;
  label: LabelIndex;
  /** Binary truth (positive / negative), or null when the text has none. */
  binary: 0 | 2 | null;
}

/** What scoring needs of a text: its 3-class and binary truth (metrics.ts). */
export type Labelled = Pick<Example, "label" | "binary">;

/** SENTIMENT_DATA_DIR, else `<repo>/../shared/data/sentiment` (the repo sits beside `shared`). */
export function sentimentDir(): string {
  const repo = fileURLToPath(new URL("../..", import.meta.url));
  return resolve(process.env.SENTIMENT_DATA_DIR ?? join(repo, "..", "shared", "data", "sentiment"));
}

export const hasSentimentData = (dir = sentimentDir()): boolean =>
  existsSync(join(dir, "tweets_GroundTruth.tsv")) &&
  existsSync(join(dir, "goemotions", "labels.txt")) &&
  existsSync(join(dir, "extra", "xed_en", "neu_en.txt"));

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

/** Text as compared for duplicates: lower case, whitespace collapsed, trimmed. */
export const dedupKey = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim();

const polar = (label: LabelIndex): 0 | 2 | null => (label === 1 ? null : label);

/** VADER's format, `id<TAB>rating<TAB>text` a line; lines without a numeric rating are skipped. */
export function ratedTexts(content: string): (Labelled & { text: string })[] {
  const out: (Labelled & { text: string })[] = [];
  for (const line of content.replace(/^\uFEFF/, "").split("\n")) {
    const cols = line.replace(/\r$/, "").split("\t");
    if (cols.length < 3) continue;
    const r = Number(cols[1]);
    if (!Number.isFinite(r)) continue;
    const label: LabelIndex = r > 0.5 ? 0 : r < -0.5 ? 2 : 1;
    out.push({ text: cols.slice(2).join("\t"), label, binary: r > 0 ? 0 : r < 0 ? 2 : null });
  }
  return out;
}

function rated(dir: string, file: string, corpus: Corpus, seed: number): Example[] {
  const draw = rng(seed);
  return ratedTexts(readFileSync(join(dir, file), "utf8")).map((t) => {
    const u = draw();
    return { corpus, split: u < 0.8 ? "train" : u < 0.9 ? "dev" : "test", ...t };
  });
}

export const GOEMOTIONS_POSITIVE: ReadonlySet<string> = new Set(
  "admiration amusement approval caring desire excitement gratitude joy love optimism pride relief".split(" "),
);
export const GOEMOTIONS_NEGATIVE: ReadonlySet<string> = new Set(
  "anger annoyance disappointment disapproval disgust embarrassment fear grief nervousness remorse sadness".split(" "),
);

/** GoEmotions' 28 label names (27 emotions, then `neutral`), in the files' id order. */
export const goemotionsLabels = (dir = sentimentDir()): string[] =>
  readFileSync(join(dir, "goemotions", "labels.txt"), "utf8")
    .trim()
    .split("\n");

export interface EmotionExample {
  split: Split;
  text: string;
  /** Label ids (indices into goemotionsLabels). */
  ids: number[];
}

/** GoEmotions with its label ids, in its own splits. */
export function loadGoEmotions(dir = sentimentDir()): EmotionExample[] {
  const out: EmotionExample[] = [];
  for (const [file, split] of [
    ["train.tsv", "train"],
    ["dev.tsv", "dev"],
    ["test.tsv", "test"],
  ] as const) {
    for (const line of readFileSync(join(dir, "goemotions", file), "utf8").split("\n")) {
      const cols = line.split("\t");
      if (cols.length < 2 || !cols[0]) continue;
      out.push({ split, text: cols[0], ids: (cols[1] as string).split(",").map(Number) });
    }
  }
  return out;
}

function goemotions(dir: string): Example[] {
  const names = goemotionsLabels(dir);
  const out: Example[] = [];
  for (const e of loadGoEmotions(dir)) {
    const emotions = e.ids.map((id) => names[id] as string);
    const pos = emotions.some((x) => GOEMOTIONS_POSITIVE.has(x));
    const neg = emotions.some((x) => GOEMOTIONS_NEGATIVE.has(x));
    if (pos && neg) continue;
    let label: LabelIndex;
    if (pos) label = 0;
    else if (neg) label = 2;
    else if (emotions.every((x) => x === "neutral")) label = 1;
    else continue;
    out.push({ corpus: "goemotions", split: e.split, text: e.text, label, binary: polar(label) });
  }
  return out;
}

function fintweets(dir: string): Example[] {
  const base = join(dir, "extra", "twitter_financial_news_sentiment");
  const out: Example[] = [];
  for (const [file, split] of [
    ["sent_train.csv", "train"],
    ["sent_valid.csv", "test"],
  ] as const) {
    const rows = parse(readFileSync(join(base, file), "utf8"), { columns: true }) as { text: string; label: string }[];
    for (const r of rows) {
      const label: LabelIndex | undefined = r.label === "1" ? 0 : r.label === "0" ? 2 : r.label === "2" ? 1 : undefined;
      if (label === undefined || !r.text) continue;
      out.push({ corpus: "fintweets", split, text: r.text, label, binary: polar(label) });
    }
  }
  return out;
}

function newsmtsc(dir: string): Example[] {
  const base = join(dir, "extra", "newsmtsc");
  const out: Example[] = [];
  for (const [file, split] of [
    ["train.jsonl", "train"],
    ["devtest_mt.jsonl", "test"],
    ["devtest_rw.jsonl", "test"],
  ] as const) {
    for (const line of readFileSync(join(base, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as { sentence_normalized: string; targets: { polarity: number }[] };
      const polarities = new Set(row.targets.map((t) => t.polarity));
      if (polarities.size !== 1) continue;
      const p = [...polarities][0];
      const label: LabelIndex | undefined = p === 6 ? 0 : p === 2 ? 2 : p === 4 ? 1 : undefined;
      if (label === undefined) continue;
      out.push({ corpus: "newsmtsc", split, text: row.sentence_normalized, label, binary: polar(label) });
    }
  }
  return out;
}

const XED_POSITIVE = new Set([5, 8]);
const XED_NEGATIVE = new Set([1, 3, 4, 6]);

function xed(dir: string): Example[] {
  const base = join(dir, "extra", "xed_en");
  const draw = rng(13);
  const out: Example[] = [];
  const add = (text: string, label: LabelIndex) =>
    out.push({ corpus: "xed", split: draw() < 0.9 ? "train" : "test", text, label, binary: polar(label) });
  for (const line of readFileSync(join(base, "en-annotated.tsv"), "utf8").split("\n")) {
    const tab = line.lastIndexOf("\t");
    if (tab < 0) continue;
    const text = line.slice(0, tab).trim();
    const ids = line
      .slice(tab + 1)
      .split(",")
      .map((s) => Number(s.trim()));
    const pos = ids.some((i) => XED_POSITIVE.has(i));
    const neg = ids.some((i) => XED_NEGATIVE.has(i));
    if (!text || pos === neg) continue;
    add(text, pos ? 0 : 2);
  }
  for (const line of readFileSync(join(base, "neu_en.txt"), "utf8").split("\n")) {
    const tab = line.indexOf("\t");
    const text = line.slice(tab + 1).trim();
    if (tab < 0 || !text) continue;
    add(text, 1);
  }
  return out;
}

export function loadCorpora(dir = sentimentDir()): Record<Corpus, Example[]> {
  return {
    tweets: rated(dir, "tweets_GroundTruth.tsv", "tweets", 11),
    amazon: rated(dir, "amazonReviewSnippets_GroundTruth.tsv", "amazon", 12),
    goemotions: goemotions(dir),
    fintweets: fintweets(dir),
    newsmtsc: newsmtsc(dir),
    xed: xed(dir),
  };
}
