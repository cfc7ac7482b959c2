import { z } from "@hono/zod-openapi";
import { LABELS, READ_FLAGS } from "../../ports/classifier.js";

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
        scores: z
          .object({ positive: Score, neutral: Score, negative: Score })
          .openapi({ description: "Every label's probability; they sum to 1." }),
        flags: z.array(z.enum(READ_FLAGS)).max(READ_FLAGS.length).optional().openapi({
          description:
            "Present when the embedded model could not read the text: `no_letters` (no letter at all) or `not_english` (mostly non-ASCII letters, or 5+ words of which fewer than one in ten is a common English word). Its scores are then 0.25 / 0.5 / 0.25, labelled neutral.",
        }),
      }),
    ),
    usage: z.object({ texts: z.number().int() }),
  })
  .openapi("ClassifyResponse");

export type ClassifyResponseBody = z.infer<typeof ClassifyResponse>;

/** What the embedded model answers for the request example (real output, not made up). */
export const CLASSIFY_EXAMPLE: ClassifyResponseBody = {
  model: { provider: "embedded", name: "almanac-sentiment-lr", version: "1.2.0" },
  labels: ["positive", "neutral", "negative"],
  results: [
    {
      index: 0,
      label: "positive",
      confidence: 0.9933438109137054,
      scores: { positive: 0.9933438109137054, neutral: 0.00502124737434943, negative: 0.0016349417119452092 },
    },
    {
      index: 1,
      label: "neutral",
      confidence: 0.5583204479079132,
      scores: { positive: 0.2322683117965824, neutral: 0.5583204479079132, negative: 0.20941124029550431 },
    },
    {
      index: 2,
      label: "negative",
      confidence: 0.8520016122931902,
      scores: { positive: 0.0698462806710062, neutral: 0.07815210703580365, negative: 0.8520016122931902 },
    },
  ],
  usage: { texts: 3 },
};
