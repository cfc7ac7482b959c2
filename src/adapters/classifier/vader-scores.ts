import vader, { type PolarityScores } from "vader-sentiment";

/**
 * VADER's `polarity_scores` with a linear-time tokenizer; the lexicon, the rules and the scoring
 * are vader-sentiment's own (its exported static methods). The package's `SentiText` maps each
 * token through a dictionary of every (punctuation × word) pair of the text, which was half of
 * the classifier's time; `vaderTokens` gives the same tokens for every input (a property test
 * compares it with the original algorithm and the scores with the package's).
 */

const analyzer = vader.SentimentIntensityAnalyzer;

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
 * One token as SentiText leaves it. The original replaces a token found in its dictionary
 * {p + w: w, w + p: w} (p in PUNC_LIST, w a word of the text with all punctuation removed and
 * longer than one code unit). Such a key has exactly one split: w holds no punctuation, so p is
 * the token's whole leading (or trailing) punctuation run, and the token itself is the text
 * word that yields w. So: strip a leading or trailing run when it is in PUNC_LIST and the rest
 * is punctuation-free and longer than one code unit.
 */
function strip(token: string): string {
  const n = token.length;
  if (isPunct(token.charCodeAt(0))) {
    let i = 1;
    while (i < n && isPunct(token.charCodeAt(i))) i++;
    if (n - i > 1 && PUNC.has(token.slice(0, i)) && !hasPunct(token, i, n)) return token.slice(i);
  } else if (isPunct(token.charCodeAt(n - 1))) {
    let j = n - 1;
    while (j > 0 && isPunct(token.charCodeAt(j - 1))) j--;
    if (j > 1 && PUNC.has(token.slice(j)) && !hasPunct(token, 0, j)) return token.slice(0, j);
  }
  return token;
}

/** SentiText.words_and_emoticons: whitespace tokens longer than one code unit, edge punctuation stripped. */
export function vaderTokens(text: string): string[] {
  const out: string[] = [];
  for (const token of text.split(/\s/)) if (token.length > 1) out.push(strip(token));
  return out;
}

/** Python's str.isupper as the package has it: an ASCII capital and no ASCII lower-case letter. */
const isUpper = (word: string): boolean => /[A-Z]/.test(word) && !/[a-z]/.test(word);

/** The package's allcap_differential: some, but not all, tokens are in capitals. */
function capDifferential(words: readonly string[]): boolean {
  let caps = 0;
  for (const w of words) if (isUpper(w)) caps++;
  const rest = words.length - caps;
  return rest > 0 && rest < words.length;
}

/**
 * The package's polarity_scores over `vaderTokens`. Its loop also skips booster words
 * (BOOSTER_DICT) before looking a word up; no booster word is in the lexicon, so the lookup
 * gives 0 for them anyway (a test checks this against the package's own booster list).
 */
export function polarityScores(text: string): PolarityScores {
  const words = vaderTokens(text);
  const sentiText = { text, words_and_emoticons: words, is_cap_diff: capDifferential(words) };
  let sentiments: number[] = [];
  for (let i = 0; i < words.length; i++) {
    const item = words[i] as string;
    if (i < words.length - 1 && item.toLowerCase() === "kind" && (words[i + 1] as string).toLowerCase() === "of") {
      sentiments.push(0);
      continue;
    }
    sentiments = analyzer.sentiment_valence(0, sentiText, item, i, sentiments);
  }
  sentiments = analyzer.but_check(words, sentiments);
  return analyzer.score_valence(sentiments, text);
}
