import type { PolarityScores } from "vader-sentiment";
import { lexicon } from "vader-sentiment/src/vader_lexicon.js";
import { isSpace } from "./readable.js";

/**
 * VADER's `polarity_scores` (vader-sentiment 1.1.3, the package's build), re-implemented so that
 * every rule runs once per token over precomputed facts (lower-case form, capitals, lexicon
 * valence) instead of re-deriving them: same tokens, same rules, the same floating-point
 * operations in the same order, so the four scores are the package's exactly (test/vibe/vader-tokens.test.ts
 * compares them on generated texts and on fixed slices of ../shared/data/sentiment, `npm run
 * check:vader` on every text of it; docs/model-card.md, *The VADER scorer*). The lexicon is
 * the package's own, read at run time. The package's `SentiText` maps each token through a
 * dictionary of every (punctuation × word) pair of the text; `vaderTokens` gives the same tokens
 * in linear time.
 */

/** The package's REGEX_REMOVE_PUNCTUATION class: ASCII punctuation, as Python's string.punctuation. */
const isPunct = (code: number): boolean =>
  (code >= 0x21 && code <= 0x2f) ||
  (code >= 0x3a && code <= 0x40) ||
  (code >= 0x5b && code <= 0x60) ||
  (code >= 0x7b && code <= 0x7e);

/** The package's PUNC_LIST: the only punctuation runs stripped from a word's start or end. */
const PUNC = new Set([
  ".",
  "!",
  "?",
  ",",
  ";",
  ":",
  "-",
  "'",
  '"',
  "!!",
  "!!!",
  "??",
  "???",
  "?!?",
  "!?!",
  "?!?!",
  "!?!?",
]);

function hasPunct(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (isPunct(s.charCodeAt(i))) return true;
  return false;
}

/**
 * The token text[from, to) as SentiText leaves it. The original replaces a token found in its dictionary
 * {p + w: w, w + p: w} (p in PUNC_LIST, w a word of the text with all punctuation removed and
 * longer than one code unit). Such a key has exactly one split: w holds no punctuation, so p is
 * the token's whole leading (or trailing) punctuation run, and the token itself is the text
 * word that yields w. So: strip a leading or trailing run when it is in PUNC_LIST and the rest
 * is punctuation-free and longer than one code unit.
 */
function stripped(text: string, from: number, to: number): string {
  if (isPunct(text.charCodeAt(from))) {
    let i = from + 1;
    while (i < to && isPunct(text.charCodeAt(i))) i++;
    if (to - i > 1 && PUNC.has(text.slice(from, i)) && !hasPunct(text, i, to)) return text.slice(i, to);
  } else if (isPunct(text.charCodeAt(to - 1))) {
    let j = to - 1;
    while (j > from && isPunct(text.charCodeAt(j - 1))) j--;
    if (j - from > 1 && PUNC.has(text.slice(j, to)) && !hasPunct(text, from, j)) return text.slice(from, j);
  }
  return text.slice(from, to);
}

/** SentiText.words_and_emoticons: whitespace tokens longer than one code unit, edge punctuation stripped. */
export function vaderTokens(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    if (i < n && !isSpace(text.charCodeAt(i))) continue;
    if (i - from > 1) out.push(stripped(text, from, i));
    from = i + 1;
  }
  return out;
}

// The package's constants (vaderSentiment.js; test/vibe/vader-tokens.test.ts checks them against its source).
const B_INCR = 0.293;
const B_DECR = -0.293;
const C_INCR = 0.733;
const N_SCALAR = -0.74;

/** VADER's lexicon: word → valence (features.ts reads the same map). */
export const LEXICON: ReadonlyMap<string, number> = new Map<string, number>(Object.entries(lexicon));

export const NEGATE: ReadonlySet<string> = new Set(
  "aint arent cannot cant couldnt darent didnt doesnt ain't aren't can't couldn't daren't didn't doesn't dont hadnt hasnt havent isnt mightnt mustnt neither don't hadn't hasn't haven't isn't mightn't mustn't neednt needn't never none nope nor not nothing nowhere oughtnt shant shouldnt uhuh wasnt werent oughtn't shan't shouldn't uh-uh wasn't weren't without wont wouldnt won't wouldn't rarely seldom despite".split(
    " ",
  ),
);

/** BOOSTER_DICT: boosters and dampeners (three of its keys are two words, looked up as such). */
export const BOOSTER_DICT: ReadonlyMap<string, number> = new Map([
  ..."absolutely amazingly awfully completely considerably decidedly deeply effing enormously entirely especially exceptionally extremely fabulously flipping flippin fricking frickin frigging friggin fully fucking greatly hella highly hugely incredibly intensely majorly more most particularly purely quite really remarkably so substantially thoroughly totally tremendously uber unbelievably unusually utterly very"
    .split(" ")
    .map((w) => [w, B_INCR] as const),
  ...["almost", "barely", "hardly", "just enough", "kind of", "kinda", "kindof", "kind-of", "less", "little"]
    .concat(["marginally", "occasionally", "partly", "scarcely", "slightly", "somewhat", "sort of", "sorta"])
    .concat(["sortof", "sort-of"])
    .map((w) => [w, B_DECR] as const),
]);

export const SPECIAL_CASE_IDIOMS: ReadonlyMap<string, number> = new Map([
  ["the shit", 3],
  ["the bomb", 3],
  ["bad ass", 1.5],
  ["yeah right", -2],
  ["cut the mustard", 2],
  ["kiss of death", -1.5],
  ["hand to mouth", -2],
]);

/** Every word of a multi-word idiom or booster: a window holding none of them matches none. */
const IDIOM_WORDS: ReadonlySet<string> = new Set(
  [...SPECIAL_CASE_IDIOMS.keys(), ...[...BOOSTER_DICT.keys()].filter((k) => k.includes(" "))].flatMap((k) =>
    k.split(" "),
  ),
);

const LEAST_IN_LEXICON = LEXICON.has("least");

/** What the rules need to know of a lower-cased token; one lookup per token. */
interface Facts {
  /** Its lexicon valence, NaN when it has none. */
  valence: number;
  /** Its BOOSTER_DICT value, 0 when it is none. */
  booster: number;
  /** In NEGATE or in a multi-word idiom or booster (which are all lower case, so only when written so). */
  negate: boolean;
  idiom: boolean;
}

const FACTS: ReadonlyMap<string, Facts> = (() => {
  const facts = new Map<string, Facts>();
  const at = (w: string) => {
    const f = facts.get(w) ?? { valence: Number.NaN, booster: 0, negate: false, idiom: false };
    facts.set(w, f);
    return f;
  };
  for (const [w, v] of LEXICON) at(w).valence = v;
  for (const [w, b] of BOOSTER_DICT) at(w).booster = b;
  for (const w of NEGATE) at(w).negate = true;
  for (const w of IDIOM_WORDS) at(w).idiom = true;
  return facts;
})();

/** Python's str.isupper as the package has it: an ASCII capital and no ASCII lower-case letter. */
function isUpper(w: string): boolean {
  let upper = false;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c >= 97 && c <= 122) return false;
    if (c >= 65 && c <= 90) upper = true;
  }
  return upper;
}

/**
 * idioms_check: whole-word idioms around word i (raw case), then the two-word dampeners before it.
 * `idiom[j]`: word j, as written, is a word of some multi-word idiom or booster; a sequence whose
 * words are not all such words matches nothing, so its string is not built.
 */
function idioms(v: number, w: readonly string[], idiom: readonly boolean[], i: number): number {
  const n = w.length;
  const [a, b, c, d] = [w[i - 3], w[i - 2], w[i - 1], w[i]];
  const [ia, ib, ic, id] = [idiom[i - 3], idiom[i - 2], idiom[i - 1], idiom[i]];
  const sequences = [
    ic && id ? `${c} ${d}` : "",
    ib && ic && id ? `${b} ${c} ${d}` : "",
    ib && ic ? `${b} ${c}` : "",
    ia && ib && ic ? `${a} ${b} ${c}` : "",
    ia && ib ? `${a} ${b}` : "",
  ];
  for (const seq of sequences) {
    const x = seq === "" ? undefined : SPECIAL_CASE_IDIOMS.get(seq);
    if (x !== undefined) {
      v = x;
      break;
    }
  }
  if (n - 1 > i && id && idiom[i + 1]) v = SPECIAL_CASE_IDIOMS.get(`${d} ${w[i + 1]}`) ?? v;
  if (n - 1 > i + 1 && id && idiom[i + 1] && idiom[i + 2])
    v = SPECIAL_CASE_IDIOMS.get(`${d} ${w[i + 1]} ${w[i + 2]}`) ?? v;
  if ((ia && ib && BOOSTER_DICT.has(`${a} ${b}`)) || (ib && ic && BOOSTER_DICT.has(`${b} ${c}`))) v = v + B_DECR;
  return v;
}

/**
 * never_check for the word `k + 1` places before word i; `negated[j]`: word j is in NEGATE as written
 * (the package's `negated([word])` is that or the word holding "n't").
 */
function neverCheck(v: number, w: readonly string[], negated: readonly boolean[], k: number, i: number): number {
  const p = i - (k + 1);
  if (k === 1 && w[i - 2] === "never" && (w[i - 1] === "so" || w[i - 1] === "this")) return v * 1.5;
  if (
    k === 2 &&
    ((w[i - 3] === "never" && (w[i - 2] === "so" || w[i - 2] === "this")) || w[i - 1] === "so" || w[i - 1] === "this")
  )
    return v * 1.25;
  return negated[p] || (w[p] as string).includes("n't") ? v * N_SCALAR : v;
}

/**
 * `parseFloat(x.toFixed(digits))` (the package's rounding): the nearest multiple of 10^−digits,
 * halves away from zero, as the nearest double. When x·10^digits is not within 10^−4 of a half
 * (its floating-point error is ~10^−13), `Math.round` finds the same integer and the division of
 * two exact integers gives the same double; otherwise toFixed decides. Zero of either sign is +0, as from toFixed.
 */
function fixed(x: number, digits: 3 | 4): number {
  if (x === 0) return 0;
  const scale = digits === 3 ? 1000 : 10000;
  const m = x * scale;
  const r = Math.round(m);
  if (Math.abs(m - r) < 0.4999) return r / scale;
  return Number.parseFloat(x.toFixed(digits));
}

/**
 * The package's polarity_scores, written into `out` from `at`: compound, pos, neg, neu (each
 * rounded as the package rounds it). One pass over the text splits it into tokens (with each
 * token's lower-case form, capitals, lexicon valence and booster value) and counts "!" and "?";
 * a second runs the rules on each token and sums as the package does, in the same order.
 */
export function vaderScoresInto(text: string, out: Float64Array, at = 0): void {
  const words: string[] = [];
  const lower: string[] = [];
  const valence: number[] = [];
  const booster: number[] = [];
  const upper: boolean[] = [];
  const negate: boolean[] = [];
  const idiom: boolean[] = [];
  let caps = 0;
  let bangs = 0;
  let questions = 0;
  let from = 0;
  const len = text.length;
  for (let i = 0; i <= len; i++) {
    const c = i < len ? text.charCodeAt(i) : 32;
    if (c === 33) bangs++;
    else if (c === 63) questions++;
    else if (isSpace(c)) {
      if (i - from > 1) {
        const w = stripped(text, from, i);
        const lw = w.toLowerCase();
        const up = isUpper(w);
        if (up) caps++;
        const f = FACTS.get(lw);
        words.push(w);
        lower.push(lw);
        upper.push(up);
        valence.push(f ? f.valence : Number.NaN);
        booster.push(f ? f.booster : 0);
        // NEGATE and idiom words are lower case: the raw token must be written so
        negate.push(f?.negate === true && w === lw);
        idiom.push(f?.idiom === true && w === lw);
      }
      from = i + 1;
    }
  }
  const n = words.length;
  if (n === 0) {
    out[at] = 0;
    out[at + 1] = 0;
    out[at + 2] = 0;
    out[at + 3] = 0;
    return;
  }
  const capDiff = n - caps > 0 && n - caps < n;
  let but = words.indexOf("but");
  if (but === -1) but = words.indexOf("BUT");
  let sum = 0;
  let posSum = 0;
  let negSum = 0;
  let neutral = 0;
  for (let i = 0; i < n; i++) {
    let v = valence[i] as number;
    // "kind" before "of", a booster, or not in the lexicon: 0
    if ((i < n - 1 && lower[i] === "kind" && lower[i + 1] === "of") || booster[i] !== 0 || Number.isNaN(v)) v = 0;
    else {
      if (upper[i] && capDiff) v = v > 0 ? v + C_INCR : v - C_INCR;
      for (let k = 0; k < 3 && k < i; k++) {
        const p = i - (k + 1);
        if (!Number.isNaN(valence[p] as number)) continue;
        // scalar_inc_dec of word p, against the valence as it stands
        let s = booster[p] as number;
        if (s !== 0) {
          if (v < 0) s *= -1;
          if (capDiff && upper[p]) s = v > 0 ? s + C_INCR : s - C_INCR;
          if (k === 1 && s !== 0) s = s * 0.95;
          else if (k === 2 && s !== 0) s = s * 0.9;
        }
        v = v + s;
        v = neverCheck(v, words, negate, k, i);
        if (k === 2) v = idioms(v, words, idiom, i);
      }
      // least_check
      if (i > 1 && lower[i - 1] === "least" && !LEAST_IN_LEXICON) {
        if (lower[i - 2] !== "at" && lower[i - 2] !== "very") v = v * N_SCALAR;
      } else if (i > 0 && lower[i - 1] === "least" && !LEAST_IN_LEXICON) v = v * N_SCALAR;
    }
    // but_check
    if (but !== -1) {
      if (i < but) v = 0.5 * v;
      else if (i > but) v = 1.5 * v;
    }
    sum += v;
    if (v > 0) posSum += v + 1;
    else if (v < 0) negSum += v - 1;
    else neutral += 1;
  }
  // punctuation_emphasis: amplify_ep + amplify_qm
  const qm = questions > 1 ? (questions <= 3 ? 0.18 * questions : 0.96) : 0;
  const emphasis = 0.292 * Math.min(bangs, 4) + qm;
  if (sum > 0) sum += emphasis;
  else if (sum < 0) sum -= emphasis;
  let compound = sum / Math.sqrt(sum * sum + 15);
  if (compound < -1) compound = -1;
  else if (compound > 1) compound = 1;
  if (posSum > Math.abs(negSum)) posSum += emphasis;
  else if (posSum < Math.abs(negSum)) negSum -= emphasis;
  const total = posSum + Math.abs(negSum) + neutral;
  out[at] = fixed(compound, 4);
  out[at + 1] = fixed(Math.abs(posSum / total), 3);
  out[at + 2] = fixed(Math.abs(negSum / total), 3);
  out[at + 3] = fixed(Math.abs(neutral / total), 3);
}

/** The package's `polarity_scores(text)`, exactly. */
export function polarityScores(text: string): PolarityScores {
  const s = new Float64Array(4);
  vaderScoresInto(text, s);
  return { neg: s[2] as number, neu: s[3] as number, pos: s[1] as number, compound: s[0] as number };
}
