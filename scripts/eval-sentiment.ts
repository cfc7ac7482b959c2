/**
 * Accuracy of the embedded model on the reference sets in ../shared/data/sentiment (VADER's own
 * human-rated ground truth, ratings −4…+4). Usage:
 *   npm run eval:sentiment            3-class and binary accuracy of the served model on both sets
 *   npm run eval:sentiment -- --fit   refit the calibration (T, bias) on the tweets set
 * 3-class truth: rating > 0.5 positive, < −0.5 negative, else neutral.
 * Binary truth: rating > 0 positive, < 0 negative (ratings of exactly 0 are left out); the
 * prediction is positive when its score is at least the negative one (VADER's compound ≥ 0).
 * "found" is binary accuracy on the texts where VADER found any sentiment (compound ≠ 0).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BIAS, scoresFromCompound, TEMPERATURE } from "../src/adapters/classifier/vader.js";
import { polarityScores } from "../src/adapters/classifier/vader-scores.js";
import { classification, type Label } from "../src/ports/classifier.js";

interface Item {
  rating: number;
  compound: number;
}

const dir = resolve(process.argv.find((a) => a.startsWith("--dir="))?.slice(6) ?? "../shared/data/sentiment");

function load(file: string): Item[] {
  return readFileSync(join(dir, file), "utf8")
    .split("\n")
    .map((line) => line.split("\t"))
    .filter((cols) => cols.length >= 3 && cols[1] !== undefined && Number.isFinite(Number(cols[1])))
    .map((cols) => ({
      rating: Number(cols[1]),
      compound: polarityScores(cols.slice(2).join("\t")).compound,
    }));
}

const truth3 = (r: number): Label => (r > 0.5 ? "positive" : r < -0.5 ? "negative" : "neutral");

function evaluate(items: Item[], temperature: number, bias: number) {
  let right3 = 0;
  let rightBin = 0;
  let nBin = 0;
  let nFound = 0;
  let rightFound = 0;
  let logLoss = 0;
  for (const it of items) {
    const scores = scoresFromCompound(it.compound, temperature, bias);
    const truth = truth3(it.rating);
    if (classification(scores).label === truth) right3++;
    logLoss -= Math.log(Math.max(1e-12, scores[truth]));
    if (it.rating !== 0) {
      nBin++;
      if (scores.positive >= scores.negative === it.rating > 0) rightBin++;
      if (it.compound !== 0) {
        nFound++;
        if (scores.positive > scores.negative === it.rating > 0) rightFound++;
      }
    }
  }
  return {
    n: items.length,
    acc3: right3 / items.length,
    nBin,
    accBin: rightBin / nBin,
    nFound,
    accFound: rightFound / nFound,
    logLoss: logLoss / items.length,
  };
}

const files = readdirSync(dir)
  .filter((f) => f.endsWith(".tsv"))
  .sort();
const sets = Object.fromEntries(files.map((f) => [f.replace(/_GroundTruth\.tsv$/, ""), load(f)]));

if (process.argv.includes("--fit")) {
  const tweets = sets.tweets;
  if (!tweets) throw new Error("tweets_GroundTruth.tsv not found");
  // Two fits: T and B free, and T alone with B = 0.05·T (VADER's published ±0.05 decision rule).
  let free = { temperature: 0, bias: 0, logLoss: Number.POSITIVE_INFINITY };
  let ruled = { ...free };
  for (let t = 0.5; t <= 15; t += 0.1) {
    const r = evaluate(tweets, t, 0.05 * t);
    if (r.logLoss < ruled.logLoss) ruled = { temperature: t, bias: 0.05 * t, logLoss: r.logLoss };
    for (let b = -1; b <= 5; b += 0.05) {
      const { logLoss } = evaluate(tweets, t, b);
      if (logLoss < free.logLoss) free = { temperature: t, bias: b, logLoss };
    }
  }
  for (const [name, f] of [
    ["free", free],
    ["±0.05 rule", ruled],
  ] as const) {
    console.log(
      `fit (${name}) on tweets: T=${f.temperature.toFixed(1)} B=${f.bias.toFixed(3)} ` +
        `threshold |compound| > ${(f.bias / f.temperature).toFixed(3)}, log-loss ${f.logLoss.toFixed(3)}`,
    );
  }
}

console.log(`model: vader-sentiment, calibration T=${TEMPERATURE} B=${BIAS.toFixed(3)}`);
console.log("set                    texts  3-class   binary (texts)   found (texts)  log-loss");
for (const [name, items] of Object.entries(sets)) {
  const r = evaluate(items, TEMPERATURE, BIAS);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7);
  console.log(
    `${name.padEnd(22)} ${String(r.n).padStart(5)}  ${pct(r.acc3)}  ${pct(r.accBin)} (${r.nBin})  ${pct(r.accFound)} (${r.nFound})  ${r.logLoss.toFixed(3)}`,
  );
}
