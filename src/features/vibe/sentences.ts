/**
 * `?include=sentences`: a text cut into sentences, each classified on its own, and whether the
 * text is mixed. Offsets and lengths are in UTF-16 code units, so `text.slice(offset, offset +
 * length)` is the sentence in JavaScript.
 */
import type { Classification, Classifier, Scores } from "../../ports/classifier.js";

export interface Span {
  offset: number;
  length: number;
}

/**
 * A text is `mixed` when one of its sentences is positive and another negative, each with a
 * confidence of at least this.
 */
export const MIXED_CONFIDENCE = 0.7;

/** Words whose full stop does not end a sentence. */
const ABBREVIATIONS = new Set(
  "mr mrs ms dr prof sr jr st vs etc eg ie no inc ltd co corp dept gen gov sen rep jan feb mar apr jun jul aug sep sept oct nov dec approx".split(
    " ",
  ),
);

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);
/** Closing quotes and brackets that stay with the sentence before them. */
const CLOSERS = new Set(['"', "'", ")", "]", "”", "’", "»"]);

/**
 * The sentences of `text`: cut after . ! ? … (and the quotes or brackets closing them) when
 * whitespace follows, and at line breaks; a full stop after a single letter or a common
 * abbreviation (Mr., e.g., Jan.) does not cut. Each sentence is trimmed of whitespace; empty
 * ones are dropped.
 */
export function splitSentences(text: string): Span[] {
  const spans: Span[] = [];
  let start = 0;
  const push = (end: number) => {
    let a = start;
    let b = end;
    while (a < b && isSpace(text[a])) a++;
    while (b > a && isSpace(text[b - 1])) b--;
    if (b > a) spans.push({ offset: a, length: b - a });
    start = end;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "\n" || c === "\r" || c === "\u2028" || c === "\u2029") {
      push(i);
      continue;
    }
    if (c !== "." && c !== "!" && c !== "?" && c !== "…") continue;
    let end = i + 1;
    while (end < text.length && (".!?…".includes(text[end] as string) || CLOSERS.has(text[end] as string))) end++;
    if (end < text.length && !isSpace(text[end])) {
      i = end - 1;
      continue;
    }
    if (c === "." && end === i + 1) {
      const word = /([A-Za-z.]+)$/.exec(text.slice(Math.max(start, i - 12), i))?.[1] ?? "";
      const bare = word.replace(/\./g, "").toLowerCase();
      if (bare.length === 1 || ABBREVIATIONS.has(bare)) continue;
    }
    push(end);
    i = end - 1;
  }
  push(text.length);
  return spans;
}

export interface SentenceResult extends Span {
  label: Classification["label"];
  confidence: number;
  scores: Scores;
}

export function isMixed(sentences: readonly Pick<SentenceResult, "label" | "confidence">[]): boolean {
  const confident = (label: string) => sentences.some((s) => s.label === label && s.confidence >= MIXED_CONFIDENCE);
  return confident("positive") && confident("negative");
}

/**
 * The sentences of each text, classified in one call of the classifier; null when it failed
 * (its detail).
 */
export async function classifySentences(
  classifier: Classifier,
  texts: readonly string[],
): Promise<{ ok: true; sentences: SentenceResult[][] } | { ok: false; detail: string }> {
  const spans = texts.map(splitSentences);
  const all = spans.flatMap((ss, t) => ss.map((s) => (texts[t] as string).slice(s.offset, s.offset + s.length)));
  const outcome = all.length ? await classifier.classify(all) : { ok: true as const, results: [] };
  if (!outcome.ok) return outcome;
  let k = 0;
  return {
    ok: true,
    sentences: spans.map((ss) =>
      ss.map((s) => {
        const r = outcome.results[k++] as Classification;
        return { ...s, label: r.label, confidence: r.confidence, scores: r.scores };
      }),
    ),
  };
}
