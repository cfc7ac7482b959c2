import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extraDiagnosis, extraMarkdown, loadExtraSets, scoreExtraSets } from "../../scripts/eval-extra.js";
import { ratedTexts } from "../../scripts/train-data.js";
import type { Metrics } from "../../scripts/train-metrics.js";
import { goalChecks } from "../../scripts/train-report.js";

/**
 * `npm run eval:sentiment -- --extra DIR`: extra held-out rating files (VADER's format, CRLF as
 * VADER's archive ships them) scored beside VADER with the model's goals per set. Uses generated
 * files only: CI never needs the real ones.
 */
describe("extra held-out rating files", () => {
  const dir = mkdtempSync(join(tmpdir(), "almanac-extra-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, "moviesGroundTruth.txt"),
    "\uFEFF1\t2.5\tA gorgeous, moving film.\r\n2\t-3\tDull and\tlong.\r\n3\t0.2\tIt opens on Friday.\r\n4\t0\tShown in café Noir.\r\nbad line\r\n",
  );
  writeFileSync(join(dir, "news_GroundTruth.tsv"), "1\t-1.5\tTaxes rose again.\n2\t1\tI love this\n");
  writeFileSync(join(dir, "notes.txt"), "1\t4\tnot a set\n");
  writeFileSync(join(dir, "tweets_GroundTruth.txt"), "1\t3\tI love this\r\n");

  it("read id<TAB>rating<TAB>text with CRLF ends and a BOM: labels as the training corpora's", () => {
    const t = ratedTexts("\uFEFF7\t0.6\tok then\r\n8\t-0.5\ttab\tinside\r\n9\tx\tno rating\r\n");
    expect(t).toEqual([
      { text: "ok then", label: 0, binary: 0 },
      { text: "tab\tinside", label: 1, binary: 2 },
    ]);
  });

  it("every *GroundTruth.txt / .tsv is a set; texts in the training corpora are left out", () => {
    const sets = loadExtraSets(dir, new Set(["I love this"]));
    expect(sets.map((s) => [s.name, s.examples.length, s.seen])).toEqual([
      ["movies", 4, 0],
      ["news", 1, 1],
      ["tweets", 0, 1],
    ]);
    expect(sets[0]?.examples.map((e) => [e.label, e.binary])).toEqual([
      [0, 0],
      [2, 2],
      [1, 0],
      [1, null],
    ]);
    expect(sets[0]?.examples[3]?.text).toBe("Shown in café Noir.");
  });

  it("both models scored per set, with the model's goals; a set wholly in the training corpora is skipped", () => {
    const sets = loadExtraSets(dir, new Set(["I love this"]));
    const sure = (t: string) =>
      t.includes("gorgeous")
        ? { positive: 0.9, neutral: 0.05, negative: 0.05 }
        : t.includes("Dull") || t.includes("Taxes")
          ? { positive: 0.05, neutral: 0.05, negative: 0.9 }
          : { positive: 0.05, neutral: 0.9, negative: 0.05 };
    const uniform = () => ({ positive: 1 / 3, neutral: 1 / 3, negative: 1 / 3 });
    const results = scoreExtraSets(sets, sure, uniform);
    expect(results.map((r) => [r.name, r.model.n, r.model.accuracy.value, r.vader.logLoss.value.toFixed(6)])).toEqual([
      ["movies", 4, 1, Math.log(3).toFixed(6)],
      ["news", 1, 1, Math.log(3).toFixed(6)],
    ]);
    const md = extraMarkdown(
      results,
      sets.filter((s) => s.examples.length === 0),
      "m 1.0",
    );
    expect(md).toContain("| movies | 4 | 100.0");
    expect(md).toContain("| movies | log-loss < ln 3 = 1.099 | 0.105 | met, by 0.993 |");
    expect(md).toContain("news: 1 texts left out (in the training corpora).");
    expect(md).toContain("tweets: skipped, all 1 texts are in the training corpora.");
  });

  it("--diag: class shares, confidence against accuracy per predicted class, figures by length", () => {
    const [movies] = loadExtraSets(dir, new Set());
    const neutral = () => ({ positive: 0.2, neutral: 0.6, negative: 0.2 });
    const lines = extraDiagnosis(movies as NonNullable<typeof movies>, neutral, neutral);
    expect(lines[0]).toBe(
      "movies: 4 texts; shares positive / neutral / negative: true 0.25 / 0.50 / 0.25, model mean p 0.20 / 0.60 / 0.20, model argmax 0.00 / 1.00 / 0.00, VADER argmax 0.00 / 1.00 / 0.00",
    );
    expect(lines).toContain("  model says neutral: 4 texts, mean confidence 0.600, right 0.500");
    expect(lines.at(-1)).toMatch(/^ {2}1–10 words: 4 texts, 3-class \/ binary \/ log-loss \/ ECE: model 50\.0 \/ /);
  });

  it("goal checks: binary ≥ VADER + 5, 3-class ≥ VADER − 1, log-loss < ln 3, ECE ≤ 0.05", () => {
    const at = (value: number) => ({ value, lo: value, hi: value });
    const m = (acc: number, bin: number, ll: number, ece: number): Metrics => ({
      n: 100,
      accuracy: at(acc),
      macroF1: at(0.5),
      logLoss: at(ll),
      brier: at(0.5),
      ece: at(ece),
      binaryN: 90,
      binaryAccuracy: at(bin),
    });
    const checks = goalChecks(m(0.6, 0.7, 1.1, 0.05), m(0.605, 0.66, 1.2, 0.2));
    expect(checks.map((g) => [g.met, g.by])).toEqual([
      [false, "1.0 points"],
      [true, "0.5 points"],
      [false, "0.001"],
      [true, "0.000"],
    ]);
  });
});
