/**
 * `npm run train:classifier`: trains the embedded models from ../shared/data/sentiment (or
 * SENTIMENT_DATA_DIR) and writes
 *   src/adapters/classifier/model/sentiment.bin   the sentiment weights (int8 per class, model-file.ts)
 *   src/adapters/classifier/model/emotions.bin    the emotion weights (emotions.ts)
 *   src/adapters/classifier/model/metrics.json    every figure, read by the model card and the CI check
 *   docs/model-card.md                            the tables, between its metrics markers
 * Deterministic: seeded splits and order, no clock, no downloads.
 *
 * Evidence, left one corpus out over GoEmotions, finance tweets, NewsMTSC and XED: a model trained
 * on the other five corpora (every text that duplicates one of the held-out corpus dropped),
 * calibrated across corpora on training data only (each training corpus scored by a model trained
 * on the other training corpora), scored on the whole held-out corpus beside VADER. The shipped
 * model is then trained the same way on the train and dev splits of all six (texts duplicating a
 * test text dropped) and scored on every test split, which the CI check re-scores.
 *
 * Flags: --no-write (print only), --no-loco (the shipped model only), --no-emotions, --only=CORPUS,…
 * (those folds only), --loco-only (no shipped model), --loco-out=FILE (write the folds' rows),
 * --loco-from=FILE,… (take the folds' rows from such files: folds run in parallel), and the
 * settings --bits=N --lr=X --balance=X --epochs=N --l2=X --bigrams=0|1 --reviews=0|1
 * --chargrams=0|1 --market=0|1 --business=0|1 --direction=0|1 --signed=0|1 --calmix=W
 * --calbalance=X --calpolar=0|1 --ensemble=0|1 --skipurls=0|1, --dropout=X (sparse features dropped
 * in training) and --adapt=X (each corpus's own copy of the weights in training), --seed=N (the
 * training order's), --seeds=K (the mean of K models trained in K orders), --decay=0|1 (the sparse
 * step decays to 0), --average=X (tail averaging over that share of the sparse steps) (defaults:
 * SHIPPED below), and --orders=N (ORDERS below: each held-out fold is trained N times, in N base
 * orders, and reported as the mean over them with their range, as the card's table is). The
 * emotion model: --emotions-only (it alone, printed, nothing written) and its settings
 * --emo-epochs=N --emo-lr=X --emo-l2=X --emo-cap=X --emo-seed=N --emo-seeds=K --emo-decay=N
 * --emo-withdev=0|1 (defaults: EMOTION_SETTINGS in emotions.ts).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LinearModel } from "../../src/adapters/classifier/linear-model.js";
import { encodeModel, MODEL_NAME, MODEL_VERSION } from "../../src/adapters/classifier/model-file.js";
import { CORPORA, type Corpus, dedupKey, type Example, HELD_OUT, loadCorpora, sentimentDir } from "./data.js";
import { EMOTION_SETTINGS, type EmotionSettings, emotionData, trainEmotions } from "./emotions.js";
import {
  featureStore,
  fitCalibration,
  meanModel,
  probabilities,
  quantise,
  rawLogits,
  rowWeights,
  type Settings,
  type Store,
  train,
  vaderProbabilities,
} from "./fit.js";
import { score } from "./metrics.js";
import { type LocoRow, type OrderRun, overOrders, printSpread, printTable, type Report, writeCard } from "./report.js";

/** The shipped settings. */
export const SHIPPED: Settings = {
  bits: 18,
  features: {
    negation: "window",
    bigrams: true,
    charGrams: false,
    market: true,
    business: true,
    direction: true,
    signed: true,
    reviews: true,
  },
  epochs: 6,
  sparseLr: 0.1,
  l2: 1e-6,
  balance: 0.5,
  calMix: 0.2,
  calBalance: 1,
  calPolarShares: false,
  ensemble: false,
  dropout: 0,
  adapt: 0,
  seed: 42,
  seeds: 3,
  decay: true,
  average: 0,
};

/**
 * Each held-out fold is trained this many times (`--orders=N` to change), with base seeds seed,
 * seed + ORDER_STRIDE, …, and its figures are their mean and range: the training order alone moves
 * a fold's figures by up to 3 points.
 */
const ORDERS = 3;
const ORDER_STRIDE = 1000;

const flag = (argv: readonly string[], name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];

function settings(argv: readonly string[]): Settings {
  const num = (name: string, d: number) => (flag(argv, name) === undefined ? d : Number(flag(argv, name)));
  return {
    bits: num("bits", SHIPPED.bits),
    features: {
      ...SHIPPED.features,
      bigrams: num("bigrams", SHIPPED.features.bigrams ? 1 : 0) === 1,
      charGrams: num("chargrams", SHIPPED.features.charGrams ? 1 : 0) === 1,
      market: num("market", SHIPPED.features.market ? 1 : 0) === 1,
      business: num("business", SHIPPED.features.business ? 1 : 0) === 1,
      direction: num("direction", SHIPPED.features.direction ? 1 : 0) === 1,
      signed: num("signed", SHIPPED.features.signed ? 1 : 0) === 1,
      reviews: num("reviews", SHIPPED.features.reviews ? 1 : 0) === 1,
      skipUrls: num("skipurls", SHIPPED.features.skipUrls ? 1 : 0) === 1,
    },
    epochs: num("epochs", SHIPPED.epochs),
    sparseLr: num("lr", SHIPPED.sparseLr),
    l2: num("l2", SHIPPED.l2),
    balance: num("balance", SHIPPED.balance),
    calMix: num("calmix", SHIPPED.calMix),
    calBalance: num("calbalance", SHIPPED.calBalance),
    calPolarShares: num("calpolar", SHIPPED.calPolarShares ? 1 : 0) === 1,
    ensemble: num("ensemble", SHIPPED.ensemble ? 1 : 0) === 1,
    dropout: num("dropout", SHIPPED.dropout),
    adapt: num("adapt", SHIPPED.adapt),
    seed: num("seed", SHIPPED.seed),
    seeds: num("seeds", SHIPPED.seeds),
    decay: num("decay", SHIPPED.decay ? 1 : 0) === 1,
    average: num("average", SHIPPED.average),
  };
}

/**
 * A model trained on `rows` and calibrated across their corpora: each corpus's rows scored by a
 * model trained on the others' rows, pooled, and the calibration fitted on those logits. With
 * `calMix` > 0 the rows scored in-domain (two halves, each by a model trained on the other) join
 * the fit with that share of the weight.
 */
function fitCalibrated(store: Store, examples: readonly Example[], rows: readonly number[], s: Settings): LinearModel {
  const corpora = [...new Set(rows.map((r) => (examples[r] as Example).corpus))];
  const pooledRows: number[] = [];
  const pooled: number[] = [];
  const innerModels: LinearModel[] = [];
  for (const c of corpora) {
    const mine = rows.filter((r) => (examples[r] as Example).corpus === c);
    const others = rows.filter((r) => (examples[r] as Example).corpus !== c);
    const raw = train(store, examples, others, s);
    innerModels.push(raw);
    const inner = quantise(raw);
    for (const z of rawLogits(inner, store, mine)) pooled.push(z);
    for (const r of mine) pooledRows.push(r);
  }
  let weights = rowWeights(examples, pooledRows, s.calBalance, s.calPolarShares);
  if (s.calMix > 0) {
    const halves = [rows.filter((_, i) => i % 2 === 0), rows.filter((_, i) => i % 2 === 1)] as const;
    const seen: number[] = [];
    for (const [k, half] of halves.entries()) {
      const inner = quantise(train(store, examples, halves[1 - k] as number[], s));
      for (const z of rawLogits(inner, store, half)) pooled.push(z);
      for (const r of half) seen.push(r);
    }
    const w = rowWeights(examples, seen, s.calBalance, s.calPolarShares);
    weights = Float64Array.from([...weights.map((x) => x * (1 - s.calMix)), ...w.map((x) => x * s.calMix)]);
    for (const r of seen) pooledRows.push(r);
  }
  const labels = pooledRows.map((r) => (examples[r] as Example).label);
  const cal = fitCalibration(Float64Array.from(pooled), labels, weights);
  const full = train(store, examples, rows, s);
  const model = quantise(s.ensemble ? meanModel([...innerModels, full]) : full);
  return { ...model, gain: cal.gain, bias: cal.bias };
}

const rowsOf = (examples: readonly Example[], keep: (e: Example) => boolean): number[] =>
  examples.flatMap((e, i) => (keep(e) ? [i] : []));

function emotionSettings(argv: readonly string[]): EmotionSettings {
  const e = EMOTION_SETTINGS;
  const num = (name: keyof EmotionSettings) => Number(flag(argv, `emo-${name.toLowerCase()}`) ?? e[name]);
  return {
    bits: e.bits,
    epochs: num("epochs"),
    lr: num("lr"),
    l2: num("l2"),
    cap: num("cap"),
    seed: num("seed"),
    seeds: num("seeds"),
    decay: num("decay"),
    withDev: num("withDev") === 1,
  };
}

function main(argv: readonly string[]) {
  if (argv.includes("--emotions-only")) {
    trainEmotions(emotionData(sentimentDir()), emotionSettings(argv));
    return;
  }
  const s = settings(argv);
  const corpora = loadCorpora();
  const examples = CORPORA.flatMap((c) => corpora[c]);
  const texts = examples.map((e) => e.text);
  const keys = texts.map(dedupKey);
  let t0 = performance.now();
  const store = featureStore(texts, s.features);
  console.log(`features of ${examples.length} texts: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const vader = vaderProbabilities(texts);
  const pick = (p: Float64Array, rows: readonly number[]) => {
    const out = new Float64Array(rows.length * 3);
    for (const [k, r] of rows.entries()) out.set(p.subarray(r * 3, r * 3 + 3), k * 3);
    return out;
  };

  const orders = Number(flag(argv, "orders") ?? ORDERS);
  const from = flag(argv, "loco-from");
  const loco: LocoRow[] = [];
  if (!from && !argv.includes("--no-loco")) {
    const only = argv
      .find((a) => a.startsWith("--only="))
      ?.slice(7)
      .split(",");
    // --only may name a corpus outside HELD_OUT (VADER's own sets): an indicator fold, printed, never reported
    for (const held of only ? CORPORA.filter((c) => only.includes(c)) : HELD_OUT) {
      t0 = performance.now();
      const evalKeys = new Set(examples.flatMap((e, i) => (e.corpus === held ? [keys[i] as string] : [])));
      const trainRows = rowsOf(examples, (e) => e.corpus !== held).filter((r) => !evalKeys.has(keys[r] as string));
      const dropped = examples.filter((e) => e.corpus !== held).length - trainRows.length;
      const evalRows = rowsOf(examples, (e) => e.corpus === held);
      const ex = evalRows.map((r) => examples[r] as Example);
      const vaderMetrics = score(pick(vader, evalRows), ex);
      const models: LinearModel[] = [];
      const runs: OrderRun[] = [];
      for (let k = 0; k < orders; k++) {
        const seed = s.seed + ORDER_STRIDE * k;
        const model = fitCalibrated(store, examples, trainRows, { ...s, seed });
        const run = {
          seed,
          model: score(probabilities(model, store, evalRows), ex),
          gain: model.gain,
          bias: model.bias,
        };
        printTable([{ heldOut: held, model: run.model, vader: vaderMetrics }]);
        models.push(model);
        runs.push(run);
      }
      const row = overOrders(held, dropped, vaderMetrics, runs);
      if (orders > 1) {
        printSpread(row);
        // each order's model with the orders' mean gain and bias: does one calibration over the orders do better?
        const { gain, bias } = row;
        const shared = models.map((m, k) => ({
          ...(runs[k] as OrderRun),
          model: score(probabilities({ ...m, gain, bias }, store, evalRows), ex),
        }));
        printSpread(overOrders(held, dropped, vaderMetrics, shared), "the orders' mean calibration");
      }
      if ((HELD_OUT as readonly Corpus[]).includes(held)) loco.push(row);
      console.log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s, ${dropped} duplicate training texts dropped)`);
    }
  }

  loco.sort((a, b) => HELD_OUT.indexOf(a.heldOut as never) - HELD_OUT.indexOf(b.heldOut as never));
  const locoOut = flag(argv, "loco-out");
  if (locoOut) writeFileSync(locoOut, JSON.stringify(loco));
  if (argv.includes("--loco-only")) return;
  const testKeys = new Set(examples.flatMap((e, i) => (e.split === "test" ? [keys[i] as string] : [])));
  const trainRows = rowsOf(examples, (e) => e.split !== "test").filter((r) => !testKeys.has(keys[r] as string));
  const model = fitCalibrated(store, examples, trainRows, s);
  const test = Object.fromEntries(
    CORPORA.map((c) => {
      const rows = rowsOf(examples, (e) => e.corpus === c && e.split === "test");
      const ex = rows.map((r) => examples[r] as Example);
      return [c, { model: score(probabilities(model, store, rows), ex), vader: score(pick(vader, rows), ex) }];
    }),
  ) as Report["test"];
  console.log("shipped model, test splits:");
  printTable(CORPORA.map((c) => ({ heldOut: c, dropped: 0, ...test[c], gain: model.gain, bias: model.bias })));

  const emotions = argv.includes("--no-emotions")
    ? undefined
    : trainEmotions(emotionData(sentimentDir()), emotionSettings(argv));
  // Folds run by other processes, read once this one's work is done.
  if (from) {
    for (const f of from.split(",")) loco.push(...(JSON.parse(readFileSync(f, "utf8")) as LocoRow[]));
    loco.sort((a, b) => HELD_OUT.indexOf(a.heldOut as never) - HELD_OUT.indexOf(b.heldOut as never));
  }
  const bin = encodeModel(model);
  const report: Report = {
    model: { name: MODEL_NAME, version: MODEL_VERSION, bits: s.bits, bytes: bin.length, settings: s },
    data: Object.fromEntries(
      CORPORA.map((c) => {
        const n = (split: string) => corpora[c].filter((e) => e.split === split).length;
        return [c, { train: n("train") + n("dev"), test: n("test") }];
      }),
    ) as Report["data"],
    droppedDuplicates: examples.filter((e) => e.split !== "test").length - trainRows.length,
    loco,
    test,
    ...(emotions ? { emotions: emotions.report } : {}),
  };
  if (argv.includes("--no-write")) return;
  const out = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
  writeFileSync(out("src/adapters/classifier/model/sentiment.bin"), bin);
  if (emotions) writeFileSync(out("src/adapters/classifier/model/emotions.bin"), emotions.bytes);
  // the card shows the figures as metrics.json stores them (rounded), which is what the CI check renders
  const stored = JSON.parse(JSON.stringify(report, round)) as Report;
  writeFileSync(out("src/adapters/classifier/model/metrics.json"), `${JSON.stringify(stored, null, 2)}\n`);
  // in the repository's format (Biome's), so that a retrain leaves `npm run check` clean
  execFileSync("npx", ["biome", "format", "--write", out("src/adapters/classifier/model/metrics.json")], {
    stdio: "ignore",
  });
  writeCard(out("docs/model-card.md"), stored);
}

/** Numbers in metrics.json to 5 decimals. */
const round = (_: string, v: unknown) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toFixed(5)) : v);

export type { Corpus };

main(process.argv.slice(2));
