/**
 * `npm run check:vader`: the fast VADER scorer (src/adapters/classifier/vader-scores.ts) against
 * vader-sentiment's own `SentimentIntensityAnalyzer.polarity_scores` on every text of
 * ../shared/data/sentiment (or SENTIMENT_DATA_DIR): the VADER tweets and Amazon snippets and every
 * GoEmotions comment of its three splits, mixed and ambiguous ones included. Prints each text whose
 * four scores differ by more than 1e-9 (exits 1 if any), then the CPU time per text of both.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import vader from "vader-sentiment";
import { polarityScores } from "../src/adapters/classifier/vader-scores.js";
import { sentimentDir } from "./train/data.js";

const dir = sentimentDir();
const corpora: [string, string[]][] = [
  ["tweets", ["tweets_GroundTruth.tsv"]],
  ["amazon", ["amazonReviewSnippets_GroundTruth.tsv"]],
  ["goemotions", ["goemotions/train.tsv", "goemotions/dev.tsv", "goemotions/test.tsv"]],
];
/** The text column: the third onwards in VADER's sets (tabs kept), the first in GoEmotions'. */
const textOf = (file: string, line: string) =>
  file.startsWith("goemotions/") ? (line.split("\t")[0] as string) : line.split("\t").slice(2).join("\t");

const KEYS = ["compound", "pos", "neg", "neu"] as const;
const reference = vader.SentimentIntensityAnalyzer;
let differing = 0;
const all: string[] = [];
for (const [corpus, files] of corpora) {
  let n = 0;
  let bad = 0;
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const text = textOf(file, line);
      const mine = polarityScores(text);
      const theirs = reference.polarity_scores(text);
      n++;
      all.push(text);
      if (KEYS.some((k) => !(Math.abs(mine[k] - theirs[k]) <= 1e-9))) {
        bad++;
        console.log(
          `${corpus}: ${JSON.stringify(text)}\n  fast    ${JSON.stringify(mine)}\n  package ${JSON.stringify(theirs)}`,
        );
      }
    }
  }
  differing += bad;
  console.log(`${corpus}: ${n} texts, ${bad} differ`);
}

/** CPU µs per text over every text, the best of `rounds` passes (the host may be shared). */
function cpuPerText(score: (t: string) => unknown, rounds = 5): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    for (const t of all) score(t);
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / all.length);
  }
  return best;
}
const rounds = Number(process.env.CHECK_ROUNDS ?? 5);
for (let i = 0; i < 2; i++) {
  const pkg = cpuPerText((t) => reference.polarity_scores(t), rounds);
  const fast = cpuPerText(polarityScores, rounds);
  console.log(
    `CPU per text over ${all.length} texts: package ${pkg.toFixed(2)} µs, fast ${fast.toFixed(2)} µs (${(pkg / fast).toFixed(1)}×)`,
  );
}
process.exitCode = differing > 0 ? 1 : 0;
