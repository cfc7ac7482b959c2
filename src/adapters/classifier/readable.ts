/**
 * Whether the trained model can read a text (it learnt English only). A text is flagged
 *   no_letters   when it holds no letter at all (digits, punctuation, emoji, whitespace), and
 *   not_english  when fewer than half of its letters are ASCII (another script: Cyrillic, CJK,
 *                Arabic, …), or when it has at least 5 words of ASCII letters and fewer than one in
 *                ten is a common English word (the function words below) or in VADER's English
 *                lexicon (another Latin-script language: "el producto es muy bueno pero la
 *                entrega fue lenta").
 * On the training corpora it flags well under 0.5 % of texts (a CI check, model-accuracy.test.ts).
 */
import { lexicon } from "vader-sentiment/src/vader_lexicon.js";
import type { ReadFlag } from "../../ports/classifier.js";

const FUNCTION_WORDS = new Set(
  `the a an and or but if of to in on at by for with from as about into over after before under than then so
  i me my mine we us our you your he him his she her it its they them their this that these those there here
  is are was were be been being am do does did done have has had having will would can could shall should may
  might must not no nor never what which who whom whose when where why how all any some each every both more
  most just only very too also out up down off again once yes ok okay oh lol im ive id youre theyre dont doesnt
  didnt isnt arent wasnt thats cant wont ill hes shes lets get got go going like well now new one two good great
  time day people see know think want make made try next back first last still even much many way`.split(/\s+/),
);

const LETTER = /\p{L}/u;

const isAsciiLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);

/** JavaScript's `\s` for one UTF-16 code unit (what `\S+` in a regular expression without /u stops at). */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** ASCII lower case of a code unit (`toLowerCase` for every unit but İ U+0130 and K U+212A, which readFlag leaves to it). */
const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/** Whether `text` holds "http://" or "https://" (any case) at `i`, followed by a non-space: the length of the prefix, or 0. */
function linkAt(text: string, i: number): number {
  if (lower(text.charCodeAt(i)) !== 104) return 0; // h
  if (text.slice(i, i + 4).toLowerCase() !== "http") return 0;
  const rest = lower(text.charCodeAt(i + 4)) === 115 ? i + 5 : i + 4; // optional s
  if (text.charCodeAt(rest) !== 58 || text.charCodeAt(rest + 1) !== 47 || text.charCodeAt(rest + 2) !== 47) return 0;
  return rest + 3 < text.length && !isSpace(text.charCodeAt(rest + 3)) ? rest + 3 - i : 0;
}

/** Whether a word (lower case) is English to readFlag: a function word (apostrophes dropped) or in VADER's lexicon. */
const isEnglish = (w: string) =>
  FUNCTION_WORDS.has(w.indexOf("'") < 0 ? w : w.replace(/'/g, "")) || Object.hasOwn(lexicon, w);

export function readFlag(text: string): ReadFlag | undefined {
  let letters = 0;
  let ascii = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      if (isAsciiLetter(c)) {
        letters++;
        ascii++;
      }
    } else if (c === 0x130 || c === 0x212a) {
      return readFlagByRegex(text); // lower-case to ASCII letters ("i̇", "k"): the words step below assumes they don't
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        if (LETTER.test(text.slice(i, i + 2))) letters++;
        i++;
      }
    } else if (LETTER.test(text[i] as string)) letters++;
  }
  if (letters === 0) return "no_letters";
  if (ascii * 2 < letters) return "not_english";
  // The words of the text lower-cased, [a-z']+ runs, once links, @mentions and #hashtags (each
  // to the next space) are taken out: they say nothing about the language.
  const words: string[] = [];
  const n = text.length;
  let start = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? lower(text.charCodeAt(i)) : 32;
    if ((c >= 97 && c <= 122) || c === 39) {
      const link = c === 104 ? linkAt(text, i) : 0;
      if (link === 0) {
        if (start < 0) start = i;
        continue;
      }
    }
    if (start >= 0) {
      words.push(text.slice(start, i).toLowerCase());
      start = -1;
    }
    const skip =
      c === 64 || c === 35 ? (i + 1 < n && !isSpace(text.charCodeAt(i + 1)) ? 1 : 0) : c === 104 ? linkAt(text, i) : 0;
    if (skip > 0) {
      i += skip;
      while (i < n && !isSpace(text.charCodeAt(i))) i++;
      i--; // the loop's i++ reaches the space (or the end), which ends nothing
    }
  }
  if (words.length < 5) return undefined;
  let english = 0;
  for (const w of words) if (isEnglish(w)) english++;
  return english * 10 < words.length ? "not_english" : undefined;
}

/** readFlag written with regular expressions over the whole text: for texts holding İ or K (the Kelvin sign). */
export function readFlagByRegex(text: string): ReadFlag | undefined {
  let letters = 0;
  let ascii = 0;
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
      letters++;
      ascii++;
    } else if (c > 127 && LETTER.test(ch)) letters++;
  }
  if (letters === 0) return "no_letters";
  if (ascii * 2 < letters) return "not_english";
  const words =
    text
      .toLowerCase()
      .replace(/(?:https?:\/\/|[@#])\S+/g, " ")
      .match(/[a-z']+/g) ?? [];
  if (words.length < 5) return undefined;
  let english = 0;
  for (const w of words) if (isEnglish(w)) english++;
  return english * 10 < words.length ? "not_english" : undefined;
}
