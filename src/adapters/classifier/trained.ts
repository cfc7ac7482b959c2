import type { Classification, Classifier, ClassifyResult, ModelInfo, Scores } from "../../ports/classifier.js";
import { classification } from "../../ports/classifier.js";
import { featureBuffer } from "./features.js";
import { type LinearModel, predict } from "./linear-model.js";
import { loadShippedModel } from "./model-file.js";
import { readFlag } from "./readable.js";

/**
 * What a text the model cannot read gets: neutral-heavy scores, never a confident label
 * (neutral at 0.5, the two polarities at 0.25 each), and the reason in `flags`.
 */
export const UNREADABLE_SCORES: Readonly<Scores> = { positive: 0.25, neutral: 0.5, negative: 0.25 };

/**
 * The embedded default: the trained sentiment model (multinomial logistic regression over hashed
 * words and lexicon features, docs/model-card.md), its weights read once when built.
 */
export class TrainedClassifier implements Classifier {
  readonly model: ModelInfo;
  private readonly weights: LinearModel;
  private readonly buf = featureBuffer();
  private readonly out = new Float64Array(3);

  constructor(loaded = loadShippedModel()) {
    this.weights = loaded;
    this.model = { provider: "embedded", name: loaded.name, version: loaded.version };
  }

  classifyOne(text: string): Classification {
    const flag = readFlag(text);
    if (flag) return { ...classification({ ...UNREADABLE_SCORES }), flags: [flag] };
    const p = this.out;
    predict(this.weights, text, this.buf, p);
    return classification({ positive: p[0] as number, neutral: p[1] as number, negative: p[2] as number });
  }

  async classify(texts: readonly string[]): Promise<ClassifyResult> {
    return { ok: true, results: texts.map((t) => this.classifyOne(t)) };
  }
}
