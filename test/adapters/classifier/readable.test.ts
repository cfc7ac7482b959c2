import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readFlag, readFlagByRegex } from "../../../src/adapters/classifier/readable.js";
import { propertyRuns } from "../../helpers/env.js";

// readFlag scans the text once by hand (it was ~9 % of classify's CPU written with a lower-cased
// copy, a replace and a match per text); readFlagByRegex is that original, kept for the two
// characters that lower-case to ASCII letters. They must agree on every text.
const PIECES = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
  ..." \t\n\r\v\f'’.,;:!?@#/-_()",
  "http://",
  "https://",
  "HTTPS://",
  "Http:",
  "http:/",
  "https//",
  "@",
  "#",
  " the ",
  " and ",
  " good ",
  " don't ",
  " 'tis ",
  "el ",
  "producto ",
  "muy ",
  "é",
  "ñ",
  "ß",
  "Ж",
  "я",
  "日本",
  "😀",
  "👍",
  "\u{1d400}", // mathematical bold A: a letter outside the BMP
  "\u00a0",
  "\u2003",
  "\u3000",
  "\ufeff",
  "\u2028",
  "\u180e",
  "\u0130", // İ: lower-cases to "i̇"
  "\u212a", // K (Kelvin): lower-cases to "k"
  "\ud800", // lone surrogates
  "\udc00",
];

const texts = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((xs) => xs.join(""));

describe("readFlag", () => {
  it("agrees with the regular-expression original on any text", () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(readFlag(text)).toBe(readFlagByRegex(text));
      }),
      { numRuns: propertyRuns(20_000) },
    );
  });

  it.each([
    ["links, mentions and hashtags are not words", "check http://x.es/el-producto-es @muy #bueno the end", undefined],
    [
      "a link's scheme in any case",
      "HTTPS://el.producto.es/muy/bueno/pero/la/entrega el producto es muy bueno",
      "not_english",
    ],
    ["an @ inside a word ends the word and takes the rest", "the@producto es muy bueno pero", undefined],
    ["İ and the Kelvin sign", "\u0130t was o\u212a and fine for me", undefined],
    ["no letters", "12345 !!! 😀", "no_letters"],
    ["another script", "Это очень хороший продукт", "not_english"],
  ])("%s", (_name, text, flag) => {
    expect(readFlag(text)).toBe(flag);
    expect(readFlagByRegex(text)).toBe(flag);
  });
});
