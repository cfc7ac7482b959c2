import { z } from "@hono/zod-openapi";
import { EMOTIONS, LABELS, READ_FLAGS } from "../../ports/classifier.js";
import { MIXED_CONFIDENCE } from "./sentences.js";

export const MAX_TEXTS = 20;
export const MAX_TEXT_LENGTH = 5000;

const Text = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(MAX_TEXT_LENGTH, `must be at most ${MAX_TEXT_LENGTH.toLocaleString("en")} characters`);

const Texts = z
  .array(Text, { error: 'expected a JSON array of strings or an object {"texts": [...]}' })
  .min(1, "send at least 1 text")
  .max(MAX_TEXTS, `send at most ${MAX_TEXTS} texts`);

const TextsObject = z.object({ texts: Texts });

export const EXAMPLE_REQUEST = { texts: ["I love this!", "The parcel arrived on Tuesday.", "Worst support ever."] };

/** The request body, for the API description (the handler validates by hand, after authentication). */
export const ClassifyRequest = z.union([Texts, TextsObject]).openapi("ClassifyRequest", {
  description: `A JSON array of 1 to ${MAX_TEXTS} non-empty strings, or \`{"texts": [...]}\` holding one.`,
  example: EXAMPLE_REQUEST,
});

export type BodyCheck = { ok: true; texts: string[] } | { ok: false; error: z.ZodError };

/**
 * The body (docs/api.md, `POST /v1/vibe/classify`): an array of strings, or `{"texts": [...]}`;
 * 1–20 non-empty strings of at most 5,000 characters. Errors keep their paths so `z.flattenError`
 * names the offending entries.
 */
export function checkClassifyBody(body: unknown): BodyCheck {
  const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
  const result = isObject ? TextsObject.safeParse(body) : Texts.safeParse(body);
  if (!result.success) return { ok: false, error: result.error };
  return { ok: true, texts: Array.isArray(result.data) ? result.data : result.data.texts };
}

const Score = z.number().min(0).max(1);

/** What `?include=` may ask for, comma-separated. */
export const INCLUDES = ["emotions", "sentences"] as const;
export type Include = (typeof INCLUDES)[number];

/** Room for both, and a repeat. */
const INCLUDE_MAX_LENGTH = 40;

export const IncludeQuery = z
  .string()
  .max(INCLUDE_MAX_LENGTH)
  .regex(/^(emotions|sentences)(,(emotions|sentences))*$/)
  .optional()
  .openapi({
    description:
      "Opt-in extras, comma-separated: `emotions` (GoEmotions' 27 emotions above their thresholds, embedded model only) " +
      "and `sentences` (each sentence classified, and `mixed`). Without it the answer and its cost are unchanged.",
    example: "emotions,sentences",
  });

/** `include`'s values (repeats and order ignored), or the first unknown one. */
export function parseInclude(
  raw: readonly string[],
): { ok: true; include: Set<Include> } | { ok: false; value: string } {
  const include = new Set<Include>();
  const long = raw.find((r) => r.length > INCLUDE_MAX_LENGTH);
  if (long !== undefined) return { ok: false, value: long };
  for (const part of raw.flatMap((r) => r.split(","))) {
    if (!(INCLUDES as readonly string[]).includes(part)) return { ok: false, value: part };
    include.add(part as Include);
  }
  return { ok: true, include };
}

const Scores = z
  .object({ positive: Score, neutral: Score, negative: Score })
  .openapi({ description: "Every label's probability; they sum to 1." });

const EmotionScore = z.object({ label: z.enum(EMOTIONS), score: Score }).openapi("Emotion");

const Sentence = z
  .object({
    offset: z.number().int().min(0).openapi({ description: "Start in the text, in UTF-16 code units (`text.slice`)." }),
    length: z.number().int().min(1).openapi({ description: "Length in UTF-16 code units." }),
    label: z.enum(LABELS),
    confidence: Score,
    scores: Scores,
  })
  .openapi("Sentence");

export const ClassifyResponse = z
  .object({
    model: z.object({
      provider: z.string().openapi({ description: "`embedded` (in-process) or `upstream` (CLASSIFIER_URL)." }),
      name: z.string(),
      version: z.string().nullable(),
    }),
    labels: z.array(z.enum(LABELS)),
    results: z.array(
      z.object({
        index: z.number().int().openapi({ description: "Position of the text in the request." }),
        label: z.enum(LABELS),
        confidence: Score.openapi({ description: "The score of `label`." }),
        scores: Scores,
        flags: z.array(z.enum(READ_FLAGS)).max(READ_FLAGS.length).optional().openapi({
          description:
            "Present when the embedded model could not read the text: `no_letters` (no letter at all) or `not_english` (mostly non-ASCII letters, or 5+ words of which fewer than one in ten is a common English word). Its scores are then 0.25 / 0.5 / 0.25, labelled neutral.",
        }),
        emotions: z.array(EmotionScore).max(EMOTIONS.length).optional().openapi({
          description:
            "With `include=emotions`: each of GoEmotions' 27 emotions whose probability reaches its own threshold, best first (often none).",
        }),
        sentences: z
          .array(Sentence)
          .optional()
          .openapi({ description: "With `include=sentences`: each sentence of the text, classified on its own." }),
        mixed: z
          .boolean()
          .optional()
          .openapi({
            description: `With \`include=sentences\`: true when one sentence is positive and another negative, each with confidence ≥ ${MIXED_CONFIDENCE}.`,
          }),
      }),
    ),
    usage: z.object({ texts: z.number().int() }),
  })
  .openapi("ClassifyResponse");

export type ClassifyResponseBody = z.infer<typeof ClassifyResponse>;

/** What the embedded model answers for the request example (real output, not made up). */
export const CLASSIFY_EXAMPLE: ClassifyResponseBody = {
  model: { provider: "embedded", name: "almanac-sentiment-lr", version: "2.3.0" },
  labels: ["positive", "neutral", "negative"],
  results: [
    {
      index: 0,
      label: "positive",
      confidence: 0.9845447115454088,
      scores: { positive: 0.9845447115454088, neutral: 0.014133184297386804, negative: 0.0013221041572042628 },
    },
    {
      index: 1,
      label: "neutral",
      confidence: 0.5725645152670019,
      scores: { positive: 0.2116544695046822, neutral: 0.5725645152670019, negative: 0.21578101522831578 },
    },
    {
      index: 2,
      label: "negative",
      confidence: 0.7657441049276322,
      scores: { positive: 0.11757160217382312, neutral: 0.11668429289854475, negative: 0.7657441049276322 },
    },
  ],
  usage: { texts: 3 },
};
