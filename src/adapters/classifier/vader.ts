import { createRequire } from "node:module";
import type { Classifier, ClassifyResult, Label, ModelInfo, Scores } from "../../ports/classifier.js";
import { polarityScores } from "./vader-scores.js";

const version = (createRequire(import.meta.url)("vader-sentiment/package.json") as { version: string }).version;

/**
 * Calibration of VADER's compound score c ∈ [−1, 1] into probabilities: a softmax over the
 * logits positive = T·c − B, neutral = 0, negative = −T·c − B with B = 0.05·T, mixed with the
 * uniform distribution: p = (1 − ε)·softmax + ε/3. The label is VADER's published rule
 * (c ≥ 0.05 positive, c ≤ −0.05 negative, else neutral — exactly −0.05 is negative), which is
 * also where the softmax changes its top label. T and ε were fitted by maximum likelihood on
 * both reference sets pooled (tweets and Amazon review snippets), chosen by 5-fold
 * cross-validation.
 */
export const TEMPERATURE = 3.5;
export const BIAS = 0.05 * TEMPERATURE;
export const SMOOTHING = 0.07;

/** VADER's decision rule on the compound score. */
export function vaderLabel(c: number): Label {
  return c >= 0.05 ? "positive" : c <= -0.05 ? "negative" : "neutral";
}

export function scoresFromCompound(c: number, temperature = TEMPERATURE, smoothing = SMOOTHING): Scores {
  const bias = 0.05 * temperature;
  const pos = Math.exp(temperature * c - bias);
  const neg = Math.exp(-temperature * c - bias);
  const sum = pos + 1 + neg;
  const keep = 1 - smoothing;
  const floor = smoothing / 3;
  return {
    positive: keep * (pos / sum) + floor,
    neutral: keep * (1 / sum) + floor,
    negative: keep * (neg / sum) + floor,
  };
}

/** The embedded model: VADER (Hutto & Gilbert 2014), a validated lexicon and rule model, in-process. */
export class VaderClassifier implements Classifier {
  readonly model: ModelInfo = { provider: "embedded", name: "vader-sentiment", version };

  async classify(texts: readonly string[]): Promise<ClassifyResult> {
    return {
      ok: true,
      results: texts.map((text) => {
        const c = polarityScores(text).compound;
        const scores = scoresFromCompound(c);
        const label = vaderLabel(c);
        return { label, confidence: scores[label], scores };
      }),
    };
  }
}
