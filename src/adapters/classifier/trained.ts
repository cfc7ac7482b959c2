import type {
  Classification,
  Classifier,
  ClassifyResult,
  Emotion,
  EmotionLabel,
  ModelInfo,
  Scores,
} from "../../ports/classifier.js";
import { classification, EMOTIONS } from "../../ports/classifier.js";
import { type EmotionModel, emotionsOfText, loadShippedEmotions } from "./emotions.js";
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
 * words and bigrams, lexicon features and VADER's scores, docs/model-card.md), its weights read
 * once when built; the emotion model's on its first use.
 */
export class TrainedClassifier implements Classifier {
  readonly model: ModelInfo;
  private readonly weights: LinearModel;
  private emotionModel: EmotionModel | undefined;
  private readonly buf = featureBuffer();
  private readonly out = new Float64Array(3);

  constructor(
    loaded = loadShippedModel(),
    private readonly loadEmotions: () => EmotionModel = loadShippedEmotions,
  ) {
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

  /** The emotions of one text above their thresholds, best first; none when it cannot be read. */
  emotionsOf(text: string): Emotion[] {
    if (readFlag(text)) return [];
    this.emotionModel ??= this.checked(this.loadEmotions());
    const m = this.emotionModel;
    const p = new Float64Array(m.labels.length);
    emotionsOfText(m, text, this.buf, p);
    const found: Emotion[] = [];
    for (const [i, label] of m.labels.entries())
      if ((p[i] as number) >= (m.thresholds[i] as number))
        found.push({ label: label as EmotionLabel, score: p[i] as number });
    return found.sort((a, b) => b.score - a.score);
  }

  private checked(m: EmotionModel): EmotionModel {
    if (m.labels.join() !== EMOTIONS.join()) throw new Error("the emotion model's labels are not GoEmotions' 27");
    return m;
  }

  emotions(texts: readonly string[]): Emotion[][] {
    return texts.map((t) => this.emotionsOf(t));
  }
}
