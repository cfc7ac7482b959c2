import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_FEATURES, DENSE, type FeatureOptions, knownOptions, VADER_DENSE } from "./features.js";
import { CLASSES, type LinearModel } from "./linear-model.js";

/** The trained model's name and version in every answer; bump the version on every retrain. */
export const MODEL_NAME = "almanac-sentiment-lr";
export const MODEL_VERSION = "2.3.0";

const MAGIC = "ALSENT01";

interface Header {
  name: string;
  version: string;
  bits: number;
  scale: [number, number, number];
  dense: number[];
  /** DENSE, then VADER_DENSE in a model stacked on VADER. */
  denseNames: readonly string[];
  temperature: number;
  gain: [number, number, number];
  bias: [number, number, number];
  /** The sparse features (negation scope, bigrams, character 3-grams, market words, web addresses). */
  features: FeatureOptions;
}

/**
 * The weights file: "ALSENT01", a little-endian uint32 length, a JSON header (name, version,
 * bucket bits, per-class scales, dense weights, calibration: temperature, per-class gain and bias,
 * sparse feature options), then 3 · 2^bits int8 weights.
 */
export function encodeModel(model: LinearModel): Buffer {
  if (!(model.weights instanceof Int8Array)) throw new Error("quantise the model before writing it");
  const denseNames = model.vader ? [...DENSE, ...VADER_DENSE] : DENSE;
  if (model.dense.length !== denseNames.length * CLASSES)
    throw new Error("the model's dense weights are not DENSE (+ VADER_DENSE)");
  const header: Header = {
    name: MODEL_NAME,
    version: MODEL_VERSION,
    bits: model.bits,
    scale: model.scale,
    dense: [...model.dense],
    denseNames,
    temperature: model.temperature,
    gain: model.gain,
    bias: model.bias,
    features: model.features ?? DEFAULT_FEATURES,
  };
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length);
  const w = model.weights;
  return Buffer.concat([Buffer.from(MAGIC), len, json, Buffer.from(w.buffer, w.byteOffset, w.byteLength)]);
}

export function decodeModel(bytes: Buffer): LinearModel & { name: string; version: string } {
  if (bytes.subarray(0, 8).toString() !== MAGIC) throw new Error("not a sentiment model file");
  const len = bytes.readUInt32LE(8);
  const header = JSON.parse(bytes.subarray(12, 12 + len).toString()) as Header;
  const vader = header.denseNames.join() === [...DENSE, ...VADER_DENSE].join();
  if (!vader && header.denseNames.join() !== DENSE.join())
    throw new Error("model file's dense features differ from this code's");
  const body = bytes.subarray(12 + len);
  const sparse = CLASSES << header.bits;
  if (body.length !== sparse) throw new Error("model file is truncated");
  const weights = new Int8Array(sparse);
  weights.set(new Int8Array(body.buffer, body.byteOffset, sparse));
  return {
    name: header.name,
    version: header.version,
    bits: header.bits,
    weights,
    scale: header.scale,
    dense: Float64Array.from(header.dense),
    vader,
    temperature: header.temperature,
    gain: header.gain,
    bias: header.bias,
    features: knownOptions(header.features ?? DEFAULT_FEATURES, "the sentiment model file"),
  };
}

/**
 * The shipped weights: beside this module in src/, or (from the esbuild bundle in dist/) in the
 * src/ tree next to dist/, which the image keeps.
 */
export function shippedModelPath(): string {
  for (const rel of ["./model/sentiment.bin", "../src/adapters/classifier/model/sentiment.bin"]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error("the sentiment model's weights (src/adapters/classifier/model/sentiment.bin) are missing");
}

export function loadShippedModel(path = shippedModelPath()) {
  return decodeModel(readFileSync(path));
}
