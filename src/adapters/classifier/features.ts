/**
 * The trained models' features, shared by the trainer (scripts/train/) and the served
 * model: one pass over the text gives hashed sparse features (words, marked when inside a
 * negation's scope; emoticons; the VADER-lexicon valence of each word, bucketed)
 * and a few dense lexicon features (a VADER-like compound over the same lexicon with negation,
 * boosters, capitals and "but"). VADER's own four scores (VADER_DENSE) come from vader-scores.ts,
 * which also holds the word lists and lexicon read here.
 */
import { BOOSTER_DICT, LEXICON, NEGATE } from "./vader-scores.js";

/** Dense features, in the order of `FeatureBuffer.dense`. */
export const DENSE = [
  "bias",
  "compound",
  "positive_share",
  "negative_share",
  "lexicon_hits",
  "exclamations",
  "questions",
  "length",
  "capitals",
  "compound_magnitude",
  "no_lexicon_hit",
  "mixed",
  "neutral_share",
] as const;

/**
 * VADER's own four scores (its `polarity_scores`, computed exactly by vader-scores.ts), dense
 * features after DENSE in a model that stacks on VADER: compound, pos, neg, neu.
 */
export const VADER_DENSE = ["vader_compound", "vader_pos", "vader_neg", "vader_neu"] as const;

/**
 * VADER's negation words as this tokenizer sees them (its NEGATE list without the forms with an
 * apostrophe or a hyphen: isNegation matches "n't" endings, and a hyphen splits words here), and "no".
 */
const NEGATIONS: ReadonlySet<string> = new Set([...[...NEGATE].filter((w) => /^[a-z]+$/.test(w)), "no"]);
/** VADER's boosters (B_INCR) and dampeners (B_DECR) that are one word here (its BOOSTER_DICT's others have a space or a hyphen). */
const BOOSTERS: ReadonlyMap<string, number> = new Map([...BOOSTER_DICT].filter(([w]) => /^[a-z]+$/.test(w)));

/** Feature families: each hashes into the same table under its own seed. */
const WORD = 0x9e3779b1;
const NEG_WORD = 0x85ebca77;
const EMOTICON = 0x165667b1;
const VALENCE = 0xd3a2646c;
const BIGRAM = 0x27d4eb2f;
const CHARGRAM = 0x61c88647;

/**
 * Feature choices: each weights file names the ones it was trained on (DEFAULT_FEATURES when
 * it does not).
 */
export interface FeatureOptions {
  /** Words marked negated after a negation word: the next 3 ("window") or up to the clause's end. */
  negation: "window" | "clause";
  /** Hashed word bigrams (of the possibly negation-marked words). */
  bigrams: boolean;
  /** Hashed character 3-grams of every word of 3 or more characters, with ^ and $ at its ends. */
  charGrams: boolean;
  /** MARKET_WORDS join the lexicon features (absent: they do not). */
  market?: boolean;
  /** BUSINESS_WORDS join the lexicon features (absent: they do not). */
  business?: boolean;
  /**
   * A change word (CHANGE_WORDS) takes its sign from the nearest measure (MEASURES) within
   * CHANGE_REACH words of its clause, whose own valence then counts nothing: "costs rose" and
   * "profit fell" negative, "cut costs" and "losses narrowed" positive (absent: no such reading).
   */
  direction?: boolean;
  /** A signed percentage ("+5%", "-3.2%") or "up" before a number is a rise or fall (absent: a number). */
  signed?: boolean;
  /** REVIEW_WORDS join the lexicon features (absent: they do not). */
  reviews?: boolean;
  /** Web addresses (http:// or https:// up to the next space) are no words (absent: they are). */
  skipUrls?: boolean;
}

/** Every option's name (a Record, so the compiler holds it equal to FeatureOptions' keys). */
const OPTION_NAMES: Record<keyof FeatureOptions, true> = {
  negation: true,
  bigrams: true,
  charGrams: true,
  market: true,
  business: true,
  direction: true,
  signed: true,
  reviews: true,
  skipUrls: true,
};

/**
 * A weights file's feature options, refused when they name one this code does not have: a model
 * trained with it would be served without it, silently wrong.
 */
export function knownOptions(features: FeatureOptions, file: string): FeatureOptions {
  for (const name of Object.keys(features))
    if (!Object.hasOwn(OPTION_NAMES, name)) throw new Error(`${file} uses a feature this code lacks: ${name}`);
  return features;
}

/**
 * Words of market direction that VADER's lexicon lacks (prices, ratings and forecasts going up
 * or down), with a valence on its scale. Chosen from what the words mean, not from any corpus.
 */
export const MARKET_WORDS: ReadonlyMap<string, number> = new Map([
  ...words(
    1.5,
    "rise rises rising rose risen surge surges surged surging soar soars soared soaring rally rallies rallied rallying rebound rebounds rebounded jumps jumped climbs climbed climbing upgrade upgrades upgraded outperform outperforms outperformed bullish exceeds exceeded beats higher",
  ),
  ...words(
    -1.5,
    "fall falls fell plunge plunges plunged plunging tumble tumbles tumbled slump slumps slumped sinks sank slides slid sliding decline declines declined declining downgrade downgrades downgraded underperform underperforms underperformed bearish slips slipped dips dipped plummets plummeted selloff layoffs bankruptcy down drops dropped dropping",
  ),
  ...words(-0.8, "trims trimmed"),
]);

/**
 * Words of business results, ratings and events that VADER's lexicon and MARKET_WORDS lack, and
 * the chart emoji, with a valence on VADER's scale. Chosen from what the words mean, not from any
 * corpus: a rise is good news unless what rises is bad (FeatureOptions.direction).
 */
export const BUSINESS_WORDS: ReadonlyMap<string, number> = new Map([
  ...words(
    1.5,
    "grew grow grows increases increasing jump jumping climb beat topped outpaced outpaces doubled tripled highs gainers uptrend breakout recovery recover recovers recovered recovering turnaround upbeat stellar tailwind tailwinds 📈 🔺",
  ),
  ...words(
    0.8,
    "raise raised raises raising lift lifts lifted lifting expanded expanding expansion widened widens widening spike spiked spikes upside buyback buybacks repurchase undervalued highest 🚀",
  ),
  ...words(
    -1.5,
    "decrease decreased decreases decreasing shrink shrank shrinks shrinking shrunk contraction contracted layoff writedown writedowns impairment impairments defaulted insolvency insolvent delisted delisting downtrend underweight headwind headwinds shortfall crashes crashed tanked slowdown halved plummet plummeting tumbling nosedive downbeat unprofitable lackluster tepid fined fines 📉 🔻",
  ),
  ...words(
    -0.8,
    "reduce reduced reduces reducing narrowed narrows narrowing slowed slows restructuring probe probes sues sued overvalued",
  ),
]);

/**
 * Verdicts of product and film reviews that VADER's lexicon, MARKET_WORDS and BUSINESS_WORDS lack
 * (what breaks or lasts, what it is worth, how a film holds), with a valence on VADER's scale.
 * Chosen from what the words mean, not from any corpus.
 */
export const REVIEW_WORDS: ReadonlyMap<string, number> = new Map([
  ...words(
    1.5,
    "sturdy sturdier durable dependable reliable gripping riveting mesmerizing mesmerising spellbinding captivating engrossing electrifying masterful masterfully unmissable poignant immersive suspenseful impeccable exquisite unforgettable witty enchanting endearing rewatchable unputdownable masterwork gem gems",
  ),
  ...words(
    0.8,
    "nuanced sleek ergonomic affordable inexpensive rugged comfy crisp intuitive seamless seamlessly effortless effortlessly handy versatile polished absorbing timeless memorable snappy speedy solidly",
  ),
  ...words(
    -1.5,
    "flimsy flimsier malfunction malfunctions malfunctioned malfunctioning unusable junk shoddy shoddily cheaply poorly unreliable unresponsive glitchy buggy unwatchable unreadable unbearable tedious tedium overlong cliched clichéd cliche cliché cliches clichés formulaic contrived plodding incoherent mediocre forgettable lifeless hackneyed uninspired unfunny cringeworthy cringey cringy amateurish overhyped overrated overpriced subpar letdown sloppy underwhelming underwhelmed knockoff ripoff unconvincing nonsensical clunky laggy bland pointless overacted overacting miscast preachy melodramatic gimmicky flawed",
  ),
  ...words(
    -0.8,
    "refund refunds refunded returned predictable meandering pretentious shallow snooze yawn overwrought schmaltzy cheesy corny slog uneven overblown bloated convoluted implausible cringe overdone hollow gimmick flaw flaws pricey breaks cracked leaks leaking leaky jammed jams overheats overheated overheating froze rattles squeaky squeaks glitch glitches warped brittle chipped flaking peeling frayed wobbly counterfeit",
  ),
]);

/** The words joining VADER's lexicon under `opts` (market, business, reviews), one map per combination. */
const ADDED_LEXICONS: ReadonlyMap<string, number>[] = [];
function addedLexicon(opts: Readonly<FeatureOptions>): ReadonlyMap<string, number> {
  const key = (opts.market ? 1 : 0) | (opts.business ? 2 : 0) | (opts.reviews ? 4 : 0);
  ADDED_LEXICONS[key] ??= new Map([
    ...(opts.market ? MARKET_WORDS : []),
    ...(opts.business ? BUSINESS_WORDS : []),
    ...(opts.reviews ? REVIEW_WORDS : []),
  ]);
  return ADDED_LEXICONS[key];
}

/** Change words: +1 a rise, −1 a fall ("eased" too, though its own valence is positive). */
export const CHANGE_WORDS: ReadonlyMap<string, number> = new Map([
  ...words(
    1,
    "rise rises rising rose risen increase increased increases increasing grew grow grows growing jump jumps jumped jumping climb climbs climbed climbing surge surges surged surging soar soars soared soaring higher doubled tripled widened widens widening raise raised raises raising lift lifts lifted lifting boost boosts boosted boosting expand expands expanded expanding spike spiked spikes gained gaining",
  ),
  ...words(
    -1,
    "fall falls fell fallen falling decline declines declined declining decrease decreased decreases decreasing drop drops dropped dropping shrink shrank shrinks shrinking shrunk lower lowered lowers lowering cut cuts cutting slash slashes slashed reduce reduces reduced reducing halved narrowed narrows narrowing down plunge plunges plunged plunging tumble tumbles tumbled slump slumps slumped sinks sank slides slid sliding dips dipped slips slipped plummet plummets plummeted trims trimmed slowed slows eased eases easing",
  ),
]);

/** What changes: +1 good when it grows (profit, sales, …), −1 bad when it grows (losses, costs, debt, …). */
export const MEASURES: ReadonlyMap<string, number> = new Map([
  ...words(
    1,
    "profit profits profitability revenue revenues sales earnings income eps ebitda ebit margin margins orders bookings dividend dividends growth demand output production deliveries shipments guidance outlook forecast target targets stock stocks shares price valuation cash",
  ),
  ...words(
    -1,
    "loss losses deficit deficits debt debts cost costs expenses expense liabilities charges provisions impairment impairments writedowns layoffs unemployment jobless inflation fears concerns worries risk risks uncertainty volatility churn defaults delinquencies shortfall outflows",
  ),
]);

/** How far (in words, within a clause) a change word reaches the measure it changes. */
const CHANGE_REACH = 4;

function words(valence: number, list: string): [string, number][] {
  return list.split(" ").map((w) => [w, valence]);
}

export const DEFAULT_FEATURES: Readonly<FeatureOptions> = { negation: "window", bigrams: false, charGrams: false };

export interface FeatureBuffer {
  /** Hashed indices (into 2^bits) and values of the sparse features; `n` of them are used. */
  index: Int32Array;
  value: Float32Array;
  n: number;
  /** DENSE, then room for VADER_DENSE (filled by the model when it stacks on VADER). */
  dense: Float64Array;
  /**
   * Negation-scope features the trainer can add to the dense ones (NEGATION_EXTRA; not used by
   * the served model unless they are in DENSE): whether a negation word occurs, and how many
   * positive and negative lexicon words fell in a negation's scope (each capped at 3, over 3).
   */
  negation: Float64Array;
}

export const NEGATION_EXTRA = ["negation_word", "negated_positive", "negated_negative"] as const;

export const MAX_SPARSE = 8192;

export function featureBuffer(): FeatureBuffer {
  return {
    index: new Int32Array(MAX_SPARSE),
    value: new Float32Array(MAX_SPARSE),
    n: 0,
    dense: new Float64Array(DENSE.length + VADER_DENSE.length),
    negation: new Float64Array(NEGATION_EXTRA.length),
  };
}

/** A 32-bit mix (murmur3's finaliser). */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function hashString(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h);
}

/** Letters, digits and apostrophes make words (any non-ASCII code unit but surrogates counts as a letter). */
function isWordChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 39 ||
    (c >= 0xc0 && (c < 0xd800 || c > 0xdfff) && c !== 0x2019 && c < 0x2000)
  );
}

/** Ends a negation's scope and resets "but" context: . , ; : ! ? */
const isClauseEnd = (c: number): boolean => c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63;

interface Word {
  text: string;
  upper: boolean;
  /** Position of the clause-ending punctuation right after it, if any. */
  clauseEnd: boolean;
  /** +1 or −1: a number written as a signed percentage ("+5%", "-3.2%"); else 0. */
  sign: number;
}

/** Words (lower-cased, apostrophes trimmed; ’ read as '), emoji and emoticons as their own tokens. */
function tokens(text: string, emoticons: string[]): Word[] {
  const words: Word[] = [];
  let cur = "";
  let ups = 0;
  let lows = 0;
  let segStart = 0;
  let segHasWord = false;
  let start = 0;
  let end = 0;
  const flush = () => {
    let w = cur;
    while (w.charCodeAt(0) === 39) w = w.slice(1);
    while (w.charCodeAt(w.length - 1) === 39) w = w.slice(0, -1);
    if (w.length > 0)
      words.push({ text: w, upper: ups > 1 && lows === 0, clauseEnd: false, sign: signedPercent(text, start, end) });
    cur = "";
    ups = 0;
    lows = 0;
  };
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 32;
    end = i;
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      flush();
      if (!segHasWord && i - segStart >= 2 && i - segStart <= 6) emoticons.push(text.slice(segStart, i).toLowerCase());
      segStart = i + 1;
      segHasWord = false;
      continue;
    }
    if (isWordChar(c) || c === 0x2019) {
      if (cur.length === 0) start = i;
      segHasWord = true;
      if (c >= 65 && c <= 90) {
        ups++;
        cur += String.fromCharCode(c + 32);
      } else {
        if (c >= 97 && c <= 122) lows++;
        cur += c === 0x2019 ? "'" : String.fromCharCode(c);
      }
      continue;
    }
    flush();
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      // an emoji (or another astral character) is a token of its own
      segHasWord = true;
      words.push({ text: text.slice(i, i + 2), upper: false, clauseEnd: false, sign: 0 });
      i++;
    } else if (isClauseEnd(c) && words.length > 0) {
      (words[words.length - 1] as Word).clauseEnd = true;
    }
  }
  return words;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * +1 or −1 when text[start, end) is a number with a sign right before it (and no word character
 * before the sign) and a per cent sign after it, decimals allowed: "+5%", "-3.2%", "−0,4 %"; else 0.
 */
function signedPercent(text: string, start: number, end: number): number {
  if (start === 0 || !isDigit(text.charCodeAt(start))) return 0;
  const s = text.charCodeAt(start - 1);
  const sign = s === 43 ? 1 : s === 45 || s === 0x2212 ? -1 : 0;
  if (sign === 0 || (start >= 2 && isWordChar(text.charCodeAt(start - 2)))) return 0;
  for (let k = start; k < end; k++) if (!isDigit(text.charCodeAt(k))) return 0;
  let k = end;
  if ((text.charCodeAt(k) === 46 || text.charCodeAt(k) === 44) && isDigit(text.charCodeAt(k + 1))) {
    k++;
    while (isDigit(text.charCodeAt(k))) k++;
  }
  if (text.charCodeAt(k) === 32) k++;
  return text.charCodeAt(k) === 37 ? sign : 0;
}

/**
 * The word nearest to word i, within CHANGE_REACH words of its clause, that `find` knows (the
 * earlier one first at equal distance), as `find` maps it; undefined when there is none.
 */
function nearest(words: readonly Word[], i: number, find: ReadonlyMap<string, number>): number | undefined {
  let back = i > 0 && !(words[i - 1] as Word).clauseEnd;
  let ahead = !(words[i] as Word).clauseEnd;
  for (let d = 1; d <= CHANGE_REACH && (back || ahead); d++) {
    if (back && i - d >= 0) {
      const w = words[i - d] as Word;
      const m = find.get(w.text);
      if (m !== undefined) return m;
      back = i - d > 0 && !(words[i - d - 1] as Word).clauseEnd;
    } else back = false;
    if (ahead && i + d < words.length) {
      const w = words[i + d] as Word;
      const m = find.get(w.text);
      if (m !== undefined) return m;
      ahead = !w.clauseEnd;
    } else ahead = false;
  }
  return undefined;
}

/** +1 or −1 when word i is a signed percentage, or "up" before a number; else 0. */
function numberSign(words: readonly Word[], i: number): number {
  const w = words[i] as Word;
  if (w.sign !== 0) return w.sign;
  return w.text === "up" && !w.clauseEnd && i + 1 < words.length && isDigit((words[i + 1] as Word).text.charCodeAt(0))
    ? 1
    : 0;
}

const URL = /https?:\/\/\S*/g;

function isNegation(w: string): boolean {
  return NEGATIONS.has(w) || w.endsWith("n't") || NEGATIONS.has(w.replace("'", ""));
}

/**
 * Fills `buf` with the features of `text`, hashed into 2^bits buckets. Sparse values are counts
 * scaled by 1/√(number of words + 1), so long and short texts weigh alike.
 */
export function featurize(
  text: string,
  bits: number,
  buf: FeatureBuffer,
  opts: Readonly<FeatureOptions> = DEFAULT_FEATURES,
): void {
  const mask = (1 << bits) - 1;
  const emoticons: string[] = [];
  const words = tokens(opts.skipUrls && text.includes("http") ? text.replace(URL, " ") : text, emoticons);
  let n = 0;
  const idx = buf.index;
  const push = (h: number) => {
    if (n < MAX_SPARSE) idx[n++] = h & mask;
  };
  let exclamations = 0;
  let questions = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 33) exclamations++;
    else if (c === 63) questions++;
  }
  const butAt = words.findIndex((w) => w.text === "but");
  let upperWords = 0;
  for (const w of words) if (w.upper) upperWords++;
  /** VADER's "cap differential": capitals emphasise only when some, not all, words are in capitals. */
  const capDiff = upperWords > 0 && upperWords < words.length;
  const added = addedLexicon(opts);
  const scopeLength = opts.negation === "clause" ? Number.POSITIVE_INFINITY : 3;
  let negScope = 0;
  let prev = 0;
  let sum = 0;
  let posSum = 0;
  let negSum = 0;
  let neutral = 0;
  let hits = 0;
  let negationWord = 0;
  let negatedPositive = 0;
  let negatedNegative = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as Word;
    const w = word.text;
    const h = hashString(w, WORD);
    const negated = negScope > 0;
    const hw = negated ? mix(h ^ NEG_WORD) : h;
    push(hw);
    if (opts.bigrams && i > 0) push(mix(Math.imul(prev, 31) ^ hw ^ BIGRAM));
    prev = hw;
    if (opts.charGrams && w.length >= 3) {
      const padded = `^${w}$`;
      for (let j = 0; j + 3 <= padded.length; j++) push(hashString(padded.slice(j, j + 3), CHARGRAM));
    }
    let v = LEXICON.get(w) ?? added.get(w);
    const sign = opts.signed ? numberSign(words, i) : 0;
    if (sign !== 0) v = 1.5 * sign;
    if (opts.direction && v !== undefined) {
      const dir = sign || CHANGE_WORDS.get(w);
      if (dir !== undefined) {
        const m = nearest(words, i, MEASURES);
        if (m !== undefined) v = m * dir * Math.abs(v);
      } else if (MEASURES.has(w) && nearest(words, i, CHANGE_WORDS) !== undefined) {
        v = undefined; // "profit fell": the change says whether it is good
      }
    }
    if (v !== undefined) {
      hits++;
      if (word.upper && capDiff) v += v > 0 ? 0.733 : -0.733;
      for (let back = 1; back <= 3 && i - back >= 0; back++) {
        const b = BOOSTERS.get((words[i - back] as Word).text);
        if (b !== undefined) v += (v > 0 ? b : -b) * (back === 1 ? 1 : back === 2 ? 0.95 : 0.9);
      }
      if (negated) {
        if (v > 0) negatedPositive++;
        else if (v < 0) negatedNegative++;
        v *= -0.74;
      }
      if (butAt >= 0) v *= i < butAt ? 0.5 : i > butAt ? 1.5 : 1;
      push(mix(Math.round(v * 2) ^ VALENCE ^ (negated ? 1 << 20 : 0)));
      sum += v;
      if (v > 0) posSum += v + 1;
      else if (v < 0) negSum += 1 - v;
      else neutral++;
    } else {
      neutral++;
    }
    if (isNegation(w)) {
      negScope = scopeLength;
      negationWord = 1;
    } else if (negScope > 0) negScope--;
    if (word.clauseEnd) negScope = 0;
  }
  for (const e of emoticons) {
    push(hashString(e, EMOTICON));
    const v = LEXICON.get(e);
    if (v !== undefined) {
      hits++;
      sum += v;
      if (v > 0) posSum += v + 1;
      else negSum += 1 - v;
    }
  }
  const scale = 1 / Math.sqrt(words.length + emoticons.length + 1);
  const val = buf.value;
  for (let k = 0; k < n; k++) val[k] = scale;
  buf.n = n;
  if (sum !== 0) {
    const emphasis = Math.min(exclamations, 4) * 0.292;
    sum += sum > 0 ? emphasis : -emphasis;
  }
  const total = posSum + negSum + neutral || 1;
  const d = buf.dense;
  d[0] = 1;
  d[1] = sum / Math.sqrt(sum * sum + 15);
  d[2] = posSum / total;
  d[3] = negSum / total;
  d[4] = Math.min(hits, 5) / 5;
  d[5] = Math.min(exclamations, 4) / 4;
  d[6] = Math.min(questions, 4) / 4;
  d[7] = Math.log1p(words.length) / 5;
  d[8] = words.length > 0 ? upperWords / words.length : 0;
  d[9] = Math.abs(d[1]);
  d[10] = hits === 0 ? 1 : 0;
  d[11] = posSum > 0 && negSum > 0 ? 1 : 0;
  d[12] = neutral / total;
  const g = buf.negation;
  g[0] = negationWord;
  g[1] = Math.min(negatedPositive, 3) / 3;
  g[2] = Math.min(negatedNegative, 3) / 3;
}
