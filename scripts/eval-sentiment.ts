/**
 * `npm run eval:sentiment`: the served sentiment model and VADER (as CLASSIFIER_MODEL=vader serves
 * it) side by side on the test split of each corpus in ../shared/data/sentiment
 * (SENTIMENT_DATA_DIR): texts the trained model never saw. VADER's tweets and Amazon snippets are
 * VADER's own tuning sets, so VADER is in-sample there. Add `--all` for every text of each corpus
 * (mostly the trained model's training data).
 * 3-class truth and binary truth per corpus: scripts/train/data.ts. Binary: positive when
 * p(positive) ≥ p(negative); balanced: the mean of the positive and the negative texts' binary
 * accuracy. ECE: top-label, 15 equal-width bins (scripts/train/metrics.ts).
 */
import { TrainedClassifier } from "../src/adapters/classifier/trained.js";
import { VaderClassifier } from "../src/adapters/classifier/vader.js";
import type { Classifier } from "../src/ports/classifier.js";
import { CORPORA, type Example, loadCorpora, sentimentDir } from "./train/data.js";
import { type Metrics, score } from "./train/metrics.js";

async function probabilities(model: Classifier, ex: readonly Example[]): Promise<Float64Array> {
  const r = await model.classify(ex.map((e) => e.text));
  if (!r.ok) throw new Error(r.detail);
  const p = new Float64Array(ex.length * 3);
  for (const [i, c] of r.results.entries()) p.set([c.scores.positive, c.scores.neutral, c.scores.negative], i * 3);
  return p;
}

const pct = (x: number) => (100 * x).toFixed(1).padStart(5);
const cell = (m: Metrics) =>
  `${pct(m.accuracy.value)} ${pct(m.binaryAccuracy.value)} ${pct(m.balancedBinary.value)}   ${m.logLoss.value.toFixed(3)} ${m.ece.value.toFixed(3)}`;

const all = process.argv.includes("--all");
const corpora = loadCorpora();
const trained = new TrainedClassifier();
const vader = new VaderClassifier();
console.log(`data: ${sentimentDir()} (${all ? "every text" : "test splits"})`);
console.log(`model: ${trained.model.name} ${trained.model.version} | VADER ${vader.model.version}`);
console.log("corpus          n     |  model: 3-cl binary  bal  logloss  ECE  |  VADER: 3-cl binary  bal  logloss  ECE");
for (const c of CORPORA) {
  const ex = corpora[c].filter((e) => all || e.split === "test");
  const m = score(await probabilities(trained, ex), ex);
  const v = score(await probabilities(vader, ex), ex);
  console.log(`${c.padEnd(12)} ${String(ex.length).padStart(6)} | ${cell(m)} | ${cell(v)}`);
}
