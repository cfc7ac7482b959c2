import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import fc from "fast-check";
import vader from "vader-sentiment";
import { lexicon } from "vader-sentiment/src/vader_lexicon.js";
import { describe, expect, it } from "vitest";
import { hasSentimentData } from "../../scripts/train/data.js";
import {
  BOOSTER_DICT,
  NEGATE,
  polarityScores,
  SPECIAL_CASE_IDIOMS,
  vaderScoresInto,
  vaderTokens,
} from "../../src/adapters/classifier/vader-scores.js";
import { propertyRuns, sampled, skippedBecause } from "../helpers/env.js";

/**
 * The fast tokenizer against vader-sentiment's own algorithm (SentiText.get_words_plus_punc and
 * get_words_and_emoticons, copied verbatim below as the oracle: the package does not export
 * SentiText), and the fast scorer (its own rules, the package's lexicon) against the package's
 * polarity_scores. `npm run check:vader` compares every text of ../shared/data/sentiment.
 */
const REGEX_REMOVE_PUNCTUATION = /[!"#$%&'()*+,-./:;<=>?@[\\\]^_`{|}~]/g;
const PUNC_LIST = [".", "!", "?", ",", ";", ":", "-", "'", '"', "!!", "!!!", "??", "???", "?!?", "!?!", "?!?!", "!?!?"];

function originalTokens(text: string): string[] {
  const words_only = text
    .slice(0)
    .replace(REGEX_REMOVE_PUNCTUATION, "")
    .split(/\s/)
    .filter((word) => word.length > 1);
  const words_punc_dict: Record<string, string> = {};
  for (const p of PUNC_LIST) {
    for (const w of words_only) {
      words_punc_dict[`${p}${w}`] = w;
      words_punc_dict[`${w}${p}`] = w;
    }
  }
  const tokens = text.split(/\s/).filter((token) => token.length > 1);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (Object.hasOwn(words_punc_dict, t)) tokens[i] = words_punc_dict[t] as string;
  }
  return tokens;
}

const WORDS = [
  "good",
  "GOOD",
  "bad",
  "not",
  "never",
  "so",
  "this",
  "kind",
  "of",
  "KIND",
  "Of",
  "but",
  "BUT",
  "at",
  "least",
  "very",
  "VERY",
  "sort",
  "kinda",
  "isn't",
  "don't",
  "love",
  "hate",
  "the",
  "a",
  "I",
  "it",
  "😀",
  "😡",
  "👍🏽",
  "naïve",
  "ÉNORME",
  "ß",
  ":)",
  ":-(",
  ":D",
  "<3",
  "__proto__",
  "hasOwnProperty",
  "constructor",
  "x",
  "no",
  // idioms, two-word dampeners, "least", "never so/this", negations
  "the",
  "shit",
  "bomb",
  "Bad",
  "ass",
  "yeah",
  "right",
  "cut",
  "mustard",
  "kiss",
  "death",
  "hand",
  "to",
  "mouth",
  "just",
  "enough",
  "kind-of",
  "sort-of",
  "Least",
  "LEAST",
  "uh-uh",
  "without",
  "NEVER",
  "wasn't",
  "can't",
  "horrible",
  "wonderful",
  "EXTREMELY",
];
const PUNCT = [...PUNC_LIST, "(", ")", "...", "?!", "!!!!", "_", "'s", "#", "@", "\\", "`", "~", "«", "»", "…"];
const SPACES = [" ", " ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "\u3000", "\ufeff"];

const piece = fc.oneof(
  fc.constantFrom(...WORDS),
  fc.constantFrom(...PUNCT),
  fc.string({ maxLength: 6, unit: "grapheme" }),
  fc.string({ maxLength: 4, unit: "binary" }),
  fc.string({ maxLength: 6, unit: fc.constantFrom(..."!?.,;:-'\"()aA b") }),
);
const token = fc.array(piece, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(""));
const text = fc
  .array(fc.tuple(token, fc.constantFrom(...SPACES)), { maxLength: 25 })
  .map((pairs) => pairs.map(([t, s]) => t + s).join(""));

const VADER_SOURCE = readFileSync(
  join(createRequire(import.meta.url).resolve("vader-sentiment/package.json"), "../src/vaderSentiment.js"),
  "utf8",
);

/** The keys (and values) of one of the package's constant objects or arrays, read from its source. */
function packageConstant(name: string): [string, string][] {
  const start = VADER_SOURCE.indexOf(`export const ${name} = `);
  const open = VADER_SOURCE.indexOf(name === "NEGATE" ? "[" : "{", start);
  const body = VADER_SOURCE.slice(open + 1, VADER_SOURCE.indexOf(name === "NEGATE" ? "];" : "};", open));
  if (name === "NEGATE") return [...body.matchAll(/(['"])(.+?)\1/g)].map((m) => [m[2] as string, ""]);
  return [...body.matchAll(/^\s*(?:'([^']+)'|([a-z-]+))\s*:\s*([^,\n]+)/gm)].map((m) => [
    (m[1] ?? m[2]) as string,
    (m[3] as string).trim(),
  ]);
}

const referenceDir = resolve("../shared/data/sentiment");
const referenceSets = existsSync(referenceDir) ? readdirSync(referenceDir).filter((f) => f.endsWith(".tsv")) : [];

// Tens of thousands of generated cases: CPU-bound, given room on a loaded 2-core host.
describe("VADER tokenizer and scores", { timeout: 120_000 }, () => {
  it("tokenizes like SentiText on generated texts (punctuation, emoji, unicode, odd whitespace)", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(vaderTokens(t)).toEqual(originalTokens(t));
      }),
      { numRuns: propertyRuns(20_000), seed: 6006 },
    );
  });

  it("tokenizes like SentiText on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: "binary" }), (t) => {
        expect(vaderTokens(t)).toEqual(originalTokens(t));
      }),
      { numRuns: propertyRuns(5_000), seed: 6007 },
    );
  });

  it("scores exactly like the package's polarity_scores", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(polarityScores(t)).toEqual(vader.SentimentIntensityAnalyzer.polarity_scores(t));
      }),
      { numRuns: propertyRuns(10_000), seed: 6008 },
    );
  });

  it("examples where the edges matter", () => {
    expect(vaderTokens("Great!!! (really) 'quoted' ?!?!wow ..dots x. :) ok")).toEqual([
      "Great",
      "(really)",
      "'quoted'",
      "wow",
      "..dots",
      "x.",
      ":)",
      "ok",
    ]);
    // A word holding punctuation keeps its edges: the original only strips around punctuation-free words.
    expect(vaderTokens("it's good, isn't-it? NOT bad!")).toEqual(["it's", "good", "isn't-it?", "NOT", "bad"]);
    for (const t of ["Great!!! (really) 'quoted' ?!?!wow ..dots x. :) ok", "it's good, isn't-it? NOT bad!"])
      expect(vaderTokens(t)).toEqual(originalTokens(t));
  });

  it.skipIf(referenceSets.length === 0)(
    `scores the reference sets exactly like the package${skippedBecause(referenceSets.length === 0, `no *.tsv in ${referenceDir}`)}`,
    () => {
      let n = 0;
      for (const file of referenceSets) {
        const lines = readFileSync(join(referenceDir, file), "utf8").split("\n");
        for (const line of sampled(lines)) {
          const t = line.split("\t").slice(2).join("\t");
          expect(vaderTokens(t)).toEqual(originalTokens(t));
          expect(polarityScores(t)).toEqual(vader.SentimentIntensityAnalyzer.polarity_scores(t));
        }
        n += lines.length;
      }
      expect(n).toBeGreaterThan(7_000);
    },
  );

  it("no booster word of the package has a lexicon valence (the skipped booster check is a no-op)", () => {
    const src = VADER_SOURCE;
    const start = src.indexOf("BOOSTER_DICT = {");
    const body = src.slice(start, src.indexOf("};", start));
    const boosters = [...body.matchAll(/^\s*(?:'([^']+)'|([a-z-]+))\s*:/gm)].map((m) => (m[1] ?? m[2]) as string);
    expect(boosters).toContain("very");
    expect(boosters.length).toBeGreaterThan(60);
    const valence = (w: string) =>
      vader.SentimentIntensityAnalyzer.sentiment_valence(
        0,
        { text: w, words_and_emoticons: [w], is_cap_diff: false },
        w,
        0,
        [],
      );
    expect(valence("good")[0]).toBeGreaterThan(0);
    for (const w of boosters) expect([w, valence(w)]).toEqual([w, [0]]);
  });

  it("uses the package's constants: negations, boosters and dampeners, idioms", () => {
    expect(new Set(packageConstant("NEGATE").map(([w]) => w))).toEqual(NEGATE);
    const value = (v: string) => ({ B_INCR: 0.293, B_DECR: -0.293 })[v] ?? Number(v);
    expect(new Map(packageConstant("BOOSTER_DICT").map(([w, v]) => [w, value(v)]))).toEqual(BOOSTER_DICT);
    expect(new Map(packageConstant("SPECIAL_CASE_IDIOMS").map(([w, v]) => [w, value(v)]))).toEqual(SPECIAL_CASE_IDIOMS);
    for (const [name, v] of [
      ["B_INCR", 0.293],
      ["B_DECR", -0.293],
      ["C_INCR", 0.733],
      ["N_SCALAR", -0.74],
    ] as const)
      expect(VADER_SOURCE).toContain(`export const ${name} = ${v};`);
  });

  it("reads the lexicon the package's build scores with (every lower-case entry, its valence)", () => {
    let n = 0;
    for (const [w, v] of Object.entries(lexicon)) {
      if (w !== w.toLowerCase()) continue; // looked up lower-cased: never found, by the package or here
      const got = vader.SentimentIntensityAnalyzer.sentiment_valence(
        0,
        { text: w, words_and_emoticons: [w], is_cap_diff: false },
        w,
        0,
        [],
      );
      expect([w, got]).toEqual([w, [v]]);
      n++;
    }
    expect(n).toBeGreaterThan(7_000);
  });

  it("splits on exactly what JavaScript's \\s matches, code unit by code unit", () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      const expected = /\s/.test(ch) ? ["ab", "cd"] : [`ab${ch}cd`];
      if (vaderTokens(`ab${ch}cd`).join("|") !== expected.join("|"))
        expect([c.toString(16), vaderTokens(`ab${ch}cd`)]).toEqual([c.toString(16), expected]);
    }
  });

  it("rules where the order of operations matters", () => {
    for (const t of [
      "not very good",
      "never so good",
      "the movie was never this bad",
      "this is the shit",
      "it was the bomb but the ending sucked",
      "yeah right, great service",
      "he can cut the mustard",
      "kiss of death for the band",
      "living hand to mouth is hard",
      "it is just enough good",
      "it was kind of good",
      "it was sort of bad",
      "at least it works, the least helpful",
      "very least good",
      "VERY GOOD but not GREAT!!!",
      "Great?? Terrible??? Fine????",
      "I don't hate it without reason",
      "The food was good, BUT the service was bad",
      "",
      "a",
    ])
      expect([t, polarityScores(t)]).toEqual([t, vader.SentimentIntensityAnalyzer.polarity_scores(t)]);
  });

  it("writes compound, pos, neg, neu into a buffer at an offset (the trained model's dense features)", () => {
    const out = new Float64Array(6);
    vaderScoresInto("What a wonderful day!", out, 2);
    const p = vader.SentimentIntensityAnalyzer.polarity_scores("What a wonderful day!");
    expect([...out]).toEqual([0, 0, p.compound, p.pos, p.neg, p.neu]);
  });

  it.skipIf(!hasSentimentData())(
    `scores a fixed slice of GoEmotions (its test split) exactly like the package${skippedBecause(!hasSentimentData(), `no GoEmotions in ${referenceDir}`)}`,
    () => {
      const lines = readFileSync(join(referenceDir, "goemotions", "test.tsv"), "utf8").split("\n");
      for (const line of sampled(lines)) {
        const t = line.split("\t")[0] as string;
        expect(polarityScores(t)).toEqual(vader.SentimentIntensityAnalyzer.polarity_scores(t));
      }
      expect(lines.length).toBeGreaterThan(5_000);
    },
  );
});
