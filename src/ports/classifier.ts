/** Sentiment classification of texts: the embedded model, or an upstream provider. */

export const LABELS = ["positive", "neutral", "negative"] as const;
export type Label = (typeof LABELS)[number];

export type Scores = Record<Label, number>;

export interface ModelInfo {
  provider: string;
  name: string;
  version: string | null;
}

export interface Classification {
  label: Label;
  /** The score of `label`. */
  confidence: number;
  /** Every label, summing to 1. */
  scores: Scores;
  /** Why the model could not read the text (its scores then say so); absent when it could. */
  flags?: ReadFlag[];
}

/** no_letters: no letter at all; not_english: another script or language (the trained model's test). */
export const READ_FLAGS = ["no_letters", "not_english"] as const;
export type ReadFlag = (typeof READ_FLAGS)[number];

export type ClassifyResult =
  | { ok: true; results: Classification[] }
  /** The provider failed (connect, timeout, non-2xx, malformed, wrong length): 502 upstream_error. */
  | { ok: false; detail: string };

/** GoEmotions' 27 emotions (Demszky et al. 2020), in its order. */
export const EMOTIONS = [
  "admiration",
  "amusement",
  "anger",
  "annoyance",
  "approval",
  "caring",
  "confusion",
  "curiosity",
  "desire",
  "disappointment",
  "disapproval",
  "disgust",
  "embarrassment",
  "excitement",
  "fear",
  "gratitude",
  "grief",
  "joy",
  "love",
  "nervousness",
  "optimism",
  "pride",
  "realization",
  "relief",
  "remorse",
  "sadness",
  "surprise",
] as const;
export type EmotionLabel = (typeof EMOTIONS)[number];

/** One emotion and its probability. */
export interface Emotion {
  label: EmotionLabel;
  score: number;
}

export interface Classifier {
  readonly model: ModelInfo;
  /** One classification per text, in input order. */
  classify(texts: readonly string[]): Promise<ClassifyResult>;
  /**
   * Per text, the emotions above their own thresholds, best first (none for a text the model
   * cannot read); absent when the classifier has no emotion model.
   */
  emotions?(texts: readonly string[]): Emotion[][];
}

/** The label with the highest score (ties: positive, neutral, negative in that order). */
export function classification(scores: Scores): Classification {
  let label: Label = "positive";
  for (const l of LABELS) if (scores[l] > scores[label]) label = l;
  return { label, confidence: scores[label], scores };
}
