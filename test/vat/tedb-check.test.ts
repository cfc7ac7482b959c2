import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadVatDataset } from "../../src/features/vat/dataset.js";
import { checkAgainstTedb } from "../../src/features/vat/tedb.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/env.js";

const SAMPLE = new URL("../fixtures/tedb-sample.csv", import.meta.url);
const sample = readFileSync(SAMPLE, "utf8");

describe("checking the VAT dataset against a TEDB export", () => {
  it("a file that agrees gives no differences (names, EL, any case of type; zero rates skipped)", () => {
    expect(checkAgainstTedb(loadVatDataset(), sample)).toEqual({ compared: 4, skipped: [], differences: [] });
  });

  it("reports each kind that differs, both ways", () => {
    const edited =
      sample.replace("AT,2026-07-01,SUPER_REDUCED,4.9", "AT,2026-07-01,SUPER_REDUCED,5.5") +
      "MT,2024-01-01,STANDARD,18\nMT,2024-01-01,REDUCED,7\nMT,2024-01-01,REDUCED,5\nXX,2024-01-01,STANDARD,1\n";
    const { differences, skipped } = checkAgainstTedb(loadVatDataset(), edited);
    expect(differences).toEqual([
      { country: "AT", date: "2026-07-01", kind: "super_reduced", ours: [4.9], tedb: [5.5] },
      { country: "MT", date: "2024-01-01", kind: "reduced", ours: [12, 7, 5], tedb: [7, 5] },
    ]);
    expect(skipped).toEqual(["line 21: XX is not in the dataset"]);
  });

  it("names the column it cannot find", () => {
    expect(() => checkAgainstTedb(loadVatDataset(), "State,When,Kind,Pct\nAT,2024-01-01,STANDARD,20\n")).toThrow(
      /no "member state" column/,
    );
  });

  it("`almanac data check --tedb` exits 0 when the file agrees and 1 with the differences listed", async () => {
    const agree = await runCli(["data", "check", "--tedb", SAMPLE.pathname], { LOG_LEVEL: "silent" });
    expect(agree.code).toBe(0);
    expect(agree.stdout).toContain("4 country-dates compared, 0 differences");
    const dir = tempDir("almanac-tedb-");
    writeFileSync(`${dir}/tedb.csv`, sample.replace("LT,2026-01-01,REDUCED,12", "LT,2026-01-01,REDUCED,9"));
    const differ = await runCli(["data", "check", "--tedb", `${dir}/tedb.csv`], { LOG_LEVEL: "silent" });
    expect(differ.code).toBe(1);
    expect(differ.stdout).toContain("LT 2026-01-01 reduced: ours 12/5, TEDB 9/5");
  });
});
