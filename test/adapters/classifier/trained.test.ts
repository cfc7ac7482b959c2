import { readFileSync, statSync } from "node:fs";
import vader from "vader-sentiment";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeEmotions } from "../../../src/adapters/classifier/emotions.js";
import { DENSE, featureBuffer, featurize, VADER_DENSE } from "../../../src/adapters/classifier/features.js";
import { calibrated, logits, predict } from "../../../src/adapters/classifier/linear-model.js";
import {
  decodeModel,
  encodeModel,
  loadShippedModel,
  MODEL_NAME,
  MODEL_VERSION,
  shippedModelPath,
} from "../../../src/adapters/classifier/model-file.js";
import { readFlag } from "../../../src/adapters/classifier/readable.js";
import { TrainedClassifier, UNREADABLE_SCORES } from "../../../src/adapters/classifier/trained.js";
import { parseConfig } from "../../../src/config.js";
import { CLASSIFY_EXAMPLE, ClassifyRequest, EXAMPLE_REQUEST } from "../../../src/features/vibe/schema.js";
import { bearer, classify, embeddedHarness, type Harness, PERMISSION } from "../../helpers/key-stores.js";

type Scores = { positive: number; neutral: number; negative: number };
type Result = { index: number; label: keyof Scores; confidence: number; scores: Scores; flags?: string[] };

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await embeddedHarness();
  key = (await h.keys.create({ name: "t", permissions: [PERMISSION] })).key;
});
afterAll(() => h.close());

async function results(texts: string[], harness = h, k = key) {
  const res = await classify(harness.t, texts, bearer(k));
  expect(res.status).toBe(200);
  return (await res.json()) as { model: object; results: Result[] };
}

describe("the trained model is the embedded default", () => {
  it("answers with its name and version, clear labels, and probabilities that sum to 1", async () => {
    const json = await results([
      "I love this, it is wonderful!",
      "The parcel arrived on Tuesday.",
      "Terrible, awful support.",
    ]);
    expect(json.model).toEqual({ provider: "embedded", name: MODEL_NAME, version: MODEL_VERSION });
    expect(json.results.map((r) => r.label)).toEqual(["positive", "neutral", "negative"]);
    for (const r of json.results) {
      expect(r.scores.positive + r.scores.neutral + r.scores.negative).toBeCloseTo(1, 10);
      expect(r.confidence).toBe(r.scores[r.label]);
      expect(r).not.toHaveProperty("flags");
    }
  });

  it("p(neutral) is not capped: a plain statement is neutral with more than VADER's ceiling of 0.37", async () => {
    const [r] = (await results(["The parcel arrived on Tuesday."])).results;
    expect(r?.scores.neutral).toBeGreaterThan(0.5);
  });

  it("negation flips a lexicon word", async () => {
    const [good, notGood] = (await results(["The food was good.", "The food was not good."])).results;
    expect(good?.label).toBe("positive");
    expect(notGood?.scores.negative).toBeGreaterThan(notGood?.scores.positive ?? 1);
  });

  it("the documented example is what it answers for the documented request", async () => {
    const res = await classify(h.t, ClassifyRequest.parse(EXAMPLE_REQUEST), bearer(key));
    expect(await res.json()).toEqual(CLASSIFY_EXAMPLE);
  });

  it("CLASSIFIER_MODEL is trained (default) or vader, nothing else", () => {
    expect(parseConfig({}).CLASSIFIER_MODEL).toBe("trained");
    expect(() => parseConfig({ CLASSIFIER_MODEL: "bert" })).toThrow(/CLASSIFIER_MODEL/);
  });

  it("CLASSIFIER_MODEL=vader keeps plain VADER", async () => {
    const v = await embeddedHarness({ CLASSIFIER_MODEL: "vader" });
    try {
      const k = (await v.keys.create({ name: "v", permissions: [PERMISSION] })).key;
      const json = await results(["The parcel arrived on Tuesday."], v, k);
      expect(json.model).toMatchObject({ provider: "embedded", name: "vader-sentiment" });
      expect(json.results[0]?.scores.neutral).toBeLessThan(0.38);
    } finally {
      await v.close();
    }
  });
});

describe("texts the model cannot read are flagged, never confidently labelled", () => {
  it.each([
    ["digits and punctuation", "12345 !!! ???", "no_letters"],
    ["emoji only", "😀😀👍", "no_letters"],
    ["Cyrillic", "Это очень хороший продукт, спасибо!", "not_english"],
    ["Japanese", "この製品は本当に素晴らしいです", "not_english"],
    ["Spanish", "El producto es muy bueno pero la entrega fue lenta", "not_english"],
    ["German", "Das Essen ist wirklich sehr lecker und billig", "not_english"],
  ])("%s → flags [%s], neutral-heavy scores", async (_name, text, flag) => {
    const [r] = (await results([text, "I love it"])).results;
    expect(r?.flags).toEqual([flag]);
    expect(r?.scores).toEqual(UNREADABLE_SCORES);
    expect(r?.label).toBe("neutral");
    expect(r?.confidence).toBe(0.5);
  });

  it.each([
    "Worst support ever.",
    "Yay. Another good phone interview.",
    "lol",
    "Amazing café, the crème brûlée was perfect",
    "GREAT PRODUCT WORKS FINE",
  ])("English is readable: %s", (text) => {
    expect(readFlag(text)).toBeUndefined();
  });
});

describe("the weights file", () => {
  /** The same weights file with its header's feature options replaced (a file trained with them). */
  const withFeatures = (bytes: Buffer, features: object) => {
    const header = JSON.parse(bytes.subarray(12, 12 + bytes.readUInt32LE(8)).toString()) as object;
    const json = Buffer.from(JSON.stringify({ ...header, features }));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(json.length);
    return Buffer.concat([bytes.subarray(0, 8), len, json, bytes.subarray(12 + bytes.readUInt32LE(8))]);
  };

  it("is at most 5 MB and decodes to what was encoded", () => {
    expect(statSync(shippedModelPath()).size).toBeLessThanOrEqual(5 * 1024 * 1024);
    const model = loadShippedModel();
    const bytes = encodeModel(model);
    const again = decodeModel(bytes);
    expect(encodeModel(again).equals(bytes)).toBe(true);
    expect(again.weights.length).toBe(3 << again.bits);
    const buf = featureBuffer();
    const z = new Float64Array(3);
    logits(again, buf, z);
    expect([...z].every(Number.isFinite)).toBe(true);
  });

  it("refuses a file of another format or a truncated one", () => {
    const bytes = encodeModel(loadShippedModel());
    expect(() => decodeModel(Buffer.from("not a model at all"))).toThrow("not a sentiment model file");
    expect(() => decodeModel(bytes.subarray(0, bytes.length - 1))).toThrow("truncated");
  });

  it("holds the header and the sparse weights only: bytes after them are refused, the header names known features", () => {
    const bytes = readFileSync(shippedModelPath());
    expect(() => decodeModel(Buffer.concat([bytes, Buffer.alloc(2 << 4)]))).toThrow();
    const header = JSON.parse(bytes.subarray(12, 12 + bytes.readUInt32LE(8)).toString()) as Record<string, unknown>;
    expect(Object.keys(header).sort()).toEqual(
      ["bias", "dense", "denseNames", "features", "gain", "name", "scale", "temperature", "version", "bits"].sort(),
    );
    const shipped = header.features as object;
    expect(decodeModel(withFeatures(bytes, shipped)).features).toEqual(shipped);
    expect(() => decodeModel(withFeatures(bytes, { ...shipped, subwords: true }))).toThrow(
      "the sentiment model file uses a feature this code lacks: subwords",
    );
  });

  it("an emotion file naming a feature this code lacks is refused too", () => {
    const bytes = readFileSync(shippedModelPath().replace("sentiment.bin", "emotions.bin"));
    const shipped = decodeEmotions(bytes).features;
    expect(decodeEmotions(withFeatures(bytes, shipped)).features).toEqual(shipped);
    expect(() => decodeEmotions(withFeatures(bytes, { ...shipped, subwords: true }))).toThrow(
      "the emotion model file uses a feature this code lacks: subwords",
    );
  });

  it("with skipUrls a web address makes no words", () => {
    const opts = { negation: "window" as const, bigrams: true, charGrams: false, skipUrls: true };
    const sparse = (text: string, o: typeof opts) => {
      const buf = featureBuffer();
      featurize(text, 18, buf, o);
      return [...buf.index.subarray(0, buf.n)];
    };
    const url = "Shares up 4% https://t.co/AZQ6aJrAQM today";
    expect(sparse(url, opts)).toEqual(sparse("Shares up 4% today", opts));
    expect(sparse(url, { ...opts, skipUrls: false })).not.toEqual(sparse("Shares up 4% today", opts));
  });

  it("the classifier reads the file it is given", async () => {
    const c = new TrainedClassifier(loadShippedModel());
    const r = await c.classify(["good", "bad"]);
    expect(r.ok && r.results.map((x) => x.label)).toEqual(["positive", "negative"]);
  });
});

describe("the model is stacked on VADER's own four scores", () => {
  const TEXTS = [
    "I love this!",
    "The food was not good.",
    "Worst support EVER!!!",
    "kind of ok, but the least helpful",
  ];

  it("its file names VADER's scores after the lexicon features", () => {
    const model = loadShippedModel();
    expect(model.vader).toBe(true);
    expect(model.dense.length).toBe((DENSE.length + VADER_DENSE.length) * 3);
    expect(decodeModel(encodeModel(model)).vader).toBe(true);
  });

  it("answers exactly as the model over the package's own polarity_scores would", () => {
    const model = loadShippedModel();
    const c = new TrainedClassifier(model);
    const buf = featureBuffer();
    const z = new Float64Array(3);
    for (const text of TEXTS) {
      featurize(text, model.bits, buf, model.features);
      const v = vader.SentimentIntensityAnalyzer.polarity_scores(text);
      buf.dense.set([v.compound, v.pos, v.neg, v.neu], DENSE.length);
      logits(model, buf, z);
      calibrated(model, z);
      const s = c.classifyOne(text).scores;
      expect([s.positive, s.neutral, s.negative]).toEqual([...z]);
    }
  });

  it("a file without VADER's scores still decodes, and is served without them", () => {
    const model = loadShippedModel();
    const plain = { ...model, vader: false, dense: model.dense.slice(0, DENSE.length * 3) };
    const again = decodeModel(encodeModel(plain));
    expect(again.vader).toBe(false);
    const buf = featureBuffer();
    buf.dense.fill(7);
    const out = new Float64Array(3);
    predict(again, "I love this!", buf, out);
    expect([...buf.dense.subarray(DENSE.length)]).toEqual([7, 7, 7, 7]);
    expect(() => encodeModel({ ...model, dense: model.dense.slice(3) })).toThrow(/dense/);
  });
});
