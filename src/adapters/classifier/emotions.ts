/**
 * The emotion model: GoEmotions' 27 emotions, multi-label, one logistic output per emotion over
 * features.ts's features with options of its own (hashed words and character 3-grams into 2^bits
 * buckets; the lexicon features and VADER's scores), each emotion with its own threshold fitted
 * on GoEmotions dev (scripts/train/emotions.ts).
 *
 * The file: "ALEMOT01", a little-endian uint32 length, a JSON header (bits, feature options,
 * labels, per-emotion scale, dense weights, thresholds), then K · 2^bits int8 weights, bucket-major.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DENSE, type FeatureBuffer, type FeatureOptions, featurize, knownOptions } from "./features.js";
import { vaderScoresInto } from "./vader-scores.js";

const MAGIC = "ALEMOT01";

export interface EmotionModel {
  bits: number;
  features: FeatureOptions;
  labels: string[];
  /** weights[bucket * K + emotion] · scale[emotion] */
  weights: Int8Array | Float32Array;
  scale: number[];
  /** dense[feature * K + emotion], over DENSE then VADER_DENSE. */
  dense: Float64Array;
  thresholds: number[];
}

interface Header {
  bits: number;
  features: FeatureOptions;
  labels: string[];
  scale: number[];
  dense: number[];
  thresholds: number[];
}

export function encodeEmotions(model: EmotionModel): Buffer {
  if (!(model.weights instanceof Int8Array)) throw new Error("quantise the emotion model before writing it");
  const header: Header = {
    bits: model.bits,
    features: model.features,
    labels: model.labels,
    scale: model.scale,
    dense: [...model.dense],
    thresholds: model.thresholds,
  };
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length);
  const w = model.weights;
  return Buffer.concat([Buffer.from(MAGIC), len, json, Buffer.from(w.buffer, w.byteOffset, w.byteLength)]);
}

export function decodeEmotions(bytes: Buffer): EmotionModel {
  if (bytes.subarray(0, 8).toString() !== MAGIC) throw new Error("not an emotion model file");
  const len = bytes.readUInt32LE(8);
  const header = JSON.parse(bytes.subarray(12, 12 + len).toString()) as Header;
  const body = bytes.subarray(12 + len);
  if (body.length !== header.labels.length << header.bits) throw new Error("emotion model file is truncated");
  const weights = new Int8Array(body.length);
  weights.set(new Int8Array(body.buffer, body.byteOffset, body.length));
  const features = knownOptions(header.features, "the emotion model file");
  return { ...header, features, weights, dense: Float64Array.from(header.dense) };
}

/** Each emotion's probability from the features in `buf` (featurized for this model), written into `out`. */
export function emotionScores(model: EmotionModel, buf: FeatureBuffer, out: Float64Array): void {
  const k = model.labels.length;
  const mask = (1 << model.bits) - 1;
  const w = model.weights;
  out.fill(0, 0, k);
  for (let j = 0; j < buf.n; j++) {
    const base = ((buf.index[j] as number) & mask) * k;
    const v = buf.value[j] as number;
    for (let e = 0; e < k; e++) out[e] = (out[e] as number) + (w[base + e] as number) * v;
  }
  const d = model.dense;
  const nd = d.length / k;
  for (let e = 0; e < k; e++) {
    let z = (out[e] as number) * (model.scale[e] as number);
    for (let f = 0; f < nd; f++) z += (d[f * k + e] as number) * (buf.dense[f] as number);
    out[e] = 1 / (1 + Math.exp(-z));
  }
}

/** Each emotion's probability for `text`; `buf` is scratch. */
export function emotionsOfText(model: EmotionModel, text: string, buf: FeatureBuffer, out: Float64Array): void {
  featurize(text, model.bits, buf, model.features);
  vaderScoresInto(text, buf.dense, DENSE.length);
  emotionScores(model, buf, out);
}

/** The shipped emotion weights, beside the sentiment weights (model-file.ts). */
export function loadShippedEmotions(): EmotionModel {
  for (const rel of ["./model/emotions.bin", "../src/adapters/classifier/model/emotions.bin"]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return decodeEmotions(readFileSync(path));
  }
  throw new Error("the emotion model's weights (src/adapters/classifier/model/emotions.bin) are missing");
}
