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

export function readFlag(text: string): ReadFlag | undefined {
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
  // links, @mentions and #hashtags say nothing about the language
  const words =
    text
      .toLowerCase()
      .replace(/(?:https?:\/\/|[@#])\S+/g, " ")
      .match(/[a-z']+/g) ?? [];
  if (words.length < 5) return undefined;
  let english = 0;
  for (const w of words) if (FUNCTION_WORDS.has(w.replace(/'/g, "")) || Object.hasOwn(lexicon, w)) english++;
  return english * 10 < words.length ? "not_english" : undefined;
}
