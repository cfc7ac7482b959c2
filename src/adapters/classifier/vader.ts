import { createRequire } from "node:module";
import {
  type Classifier,
  type ClassifyResult,
  classification,
  type ModelInfo,
  type Scores,
} from "../../ports/classifier.js";
import { polarityScores } from "./vader-scores.js";

const version = (createRequire(import.meta.url)("vader-sentiment/package.json") as { version: string }).version;

/**
 * Calibration of VADER's compound score c ∈ [−1, 1] into probabilities: a softmax over the
 * logits positive = T·c − B, neutral = 0, negative = −T·c − B. With B = 0.05·T the top label is
 * VADER's published rule (c ≥ 0.05 positive, c ≤ −0.05 negative, else neutral); T was fitted by
 * maximum likelihood of the 3-class labels on the tweets reference set, the Amazon set held out
 * (`npm run eval:sentiment -- --fit`; a free fit of B moved the threshold to 0.21, gained little
 * log-loss and lost accuracy).
 */
export const TEMPERATURE = 3.7;
export const BIAS = 0.05 * TEMPERATURE;

export function scoresFromCompound(c: number, temperature = TEMPERATURE, bias = BIAS): Scores {
  const pos = Math.exp(temperature * c - bias);
  const neg = Math.exp(-temperature * c - bias);
  const sum = pos + 1 + neg;
  return { positive: pos / sum, neutral: 1 / sum, negative: neg / sum };
}

/** The embedded model: VADER (Hutto & Gilbert 2014), a validated lexicon and rule model, in-process. */
export class VaderClassifier implements Classifier {
  readonly model: ModelInfo = { provider: "embedded", name: "vader-sentiment", version };

  async classify(texts: readonly string[]): Promise<ClassifyResult> {
    return {
      ok: true,
      results: texts.map((text) => {
        const c = polarityScores(text).compound;
        return classification(scoresFromCompound(c));
      }),
    };
  }
}
