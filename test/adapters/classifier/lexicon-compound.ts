import { type FeatureOptions, featureBuffer, featurize } from "../../../src/adapters/classifier/features.js";

/** The lexicon features' compound (DENSE[1]) of a text. */
export function compound(text: string, opts: FeatureOptions): number {
  const buf = featureBuffer();
  featurize(text, 18, buf, opts);
  return buf.dense[1] as number;
}
