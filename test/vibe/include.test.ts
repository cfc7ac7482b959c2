import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL_VERSION } from "../../src/adapters/classifier/model-file.js";
import { isMixed, MIXED_CONFIDENCE, splitSentences } from "../../src/features/vibe/sentences.js";
import { EMOTIONS } from "../../src/ports/classifier.js";
import { bearer, embeddedHarness, type Harness, PERMISSION } from "../helpers/key-stores.js";

type Scores = { positive: number; neutral: number; negative: number };
interface Sentence {
  offset: number;
  length: number;
  label: keyof Scores;
  confidence: number;
  scores: Scores;
}
interface Result {
  label: string;
  emotions?: { label: string; score: number }[];
  sentences?: Sentence[];
  mixed?: boolean;
}

let h: Harness;
let vader: Harness;
let key: string;
let vaderKey: string;
beforeAll(async () => {
  h = await embeddedHarness();
  vader = await embeddedHarness({ CLASSIFIER_MODEL: "vader" });
  key = (await h.keys.create({ name: "t", permissions: [PERMISSION] })).key;
  vaderKey = (await vader.keys.create({ name: "t", permissions: [PERMISSION] })).key;
});
afterAll(async () => {
  await h.close();
  await vader.close();
});

const post = (harness: Harness, k: string, query: string, texts: string[]) =>
  harness.t.app.request(`/v1/vibe/classify${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...bearer(k) },
    body: JSON.stringify(texts),
  });

async function results(query: string, texts: string[]) {
  const res = await post(h, key, query, texts);
  expect(res.status).toBe(200);
  return (await res.json()) as { model: { version: string }; results: Result[] };
}

describe("?include=emotions,sentences", () => {
  it("without include the answer has no extras", async () => {
    const [r] = (await results("", ["Thank you so much, I love it!"])).results;
    expect(r).not.toHaveProperty("emotions");
    expect(r).not.toHaveProperty("sentences");
    expect(r).not.toHaveProperty("mixed");
  });

  it("emotions: GoEmotions' labels above their thresholds, best first", async () => {
    const json = await results("?include=emotions", ["Thank you so much, I love it!", "The parcel arrived."]);
    expect(json.model.version).toBe(MODEL_VERSION);
    const [thanks, plain] = json.results;
    const labels = thanks?.emotions?.map((e) => e.label) ?? [];
    expect(labels).toContain("gratitude");
    for (const l of labels) expect(EMOTIONS).toContain(l);
    const scores = thanks?.emotions?.map((e) => e.score) ?? [];
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(plain?.emotions).toBeDefined();
    expect(plain).not.toHaveProperty("sentences");
  });

  it("sentences: offsets and lengths in UTF-16 code units, each classified, and mixed", async () => {
    const text = "The staff were wonderful 😀 and kind! But the room was filthy and awful.";
    const [r] = (await results("?include=sentences", [text])).results;
    const s = r?.sentences ?? [];
    expect(s.map((x) => text.slice(x.offset, x.offset + x.length))).toEqual([
      "The staff were wonderful 😀 and kind!",
      "But the room was filthy and awful.",
    ]);
    expect(s.map((x) => x.label)).toEqual(["positive", "negative"]);
    for (const x of s) expect(x.confidence).toBe(x.scores[x.label]);
    expect(r?.mixed).toBe(s.every((x) => x.confidence >= MIXED_CONFIDENCE));
    expect(r).not.toHaveProperty("emotions");
  });

  it("both at once, repeated or reordered alike", async () => {
    const a = await results("?include=sentences,emotions", ["Great. Terrible."]);
    const b = await results("?include=emotions&include=sentences,emotions", ["Great. Terrible."]);
    expect(b).toEqual(a);
    expect(a.results[0]).toHaveProperty("emotions");
    expect(a.results[0]).toHaveProperty("sentences");
  });

  it("an unknown value is a 400 invalid_body naming it", async () => {
    const res = await post(h, key, "?include=emotions,vibes", ["hi"]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_body");
    expect(body.error.message).toContain('"vibes"');
  });

  it("with CLASSIFIER_MODEL=vader: sentences work, emotions are a 400", async () => {
    const ok = await post(vader, vaderKey, "?include=sentences", ["Good. Bad."]);
    expect(ok.status).toBe(200);
    const json = (await ok.json()) as { model: { name: string }; results: Result[] };
    expect(json.model.name).toBe("vader-sentiment");
    expect(json.results[0]?.sentences).toHaveLength(2);
    const res = await post(vader, vaderKey, "?include=emotions", ["Good."]);
    expect(res.status).toBe(400);
  });
});

describe("sentence splitting", () => {
  const cut = (text: string) => splitSentences(text).map((s) => text.slice(s.offset, s.offset + s.length));

  it("cuts after . ! ? … and line breaks, keeping closing quotes, trimming whitespace", () => {
    expect(cut('  He said "no!" Then left…  Why?\nFine')).toEqual(['He said "no!"', "Then left…", "Why?", "Fine"]);
  });

  it("does not cut after abbreviations, initials, decimals or a full stop inside a word", () => {
    expect(cut("Mr. Smith paid $3.50 at example.com, e.g. today. J. R. R. Tolkien wrote it.")).toEqual([
      "Mr. Smith paid $3.50 at example.com, e.g. today.",
      "J. R. R. Tolkien wrote it.",
    ]);
  });

  it("a text without an end mark is one sentence; blank runs make none", () => {
    expect(cut("no end mark")).toEqual(["no end mark"]);
    expect(splitSentences("   \n  ")).toEqual([]);
  });

  it("mixed needs a confident positive and a confident negative sentence", () => {
    const s = (label: "positive" | "negative" | "neutral", confidence: number) => ({ label, confidence });
    expect(isMixed([s("positive", 0.9), s("negative", 0.8)])).toBe(true);
    expect(isMixed([s("positive", 0.9), s("negative", MIXED_CONFIDENCE - 0.01)])).toBe(false);
    expect(isMixed([s("positive", 0.9), s("neutral", 0.9)])).toBe(false);
  });
});
