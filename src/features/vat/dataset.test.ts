import { describe, expect, it } from "vitest";
import raw from "./data/rates.json" with { type: "json" };
import { loadVatDataset } from "./dataset.js";
import { ratesOn } from "./lookup.js";

const data = loadVatDataset();

const EU27 = "AT BE BG CY CZ DE DK EE GR ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK".split(" ");

function on(code: string, date: string) {
  const r = ratesOn(data, code, date);
  if (!r.ok) throw new Error(`${code} ${date}: ${r.reason}`);
  return r.answer;
}

describe("VAT dataset", () => {
  it("covers EU-27, GB, XI, NO, CH, IS, LI, MC and IM from 2019-01-01, each period with a named source and URL", () => {
    for (const code of [...EU27, "GB", "XI", "NO", "CH", "IS", "LI", "MC", "IM"]) {
      const country = data.countries[code];
      expect(country, code).toBeDefined();
      expect((country?.periods[0]?.effective_from ?? "9999") <= "2019-01-01", code).toBe(true);
      for (const p of country?.periods ?? []) {
        const a = on(code, p.effective_from);
        expect(a.source.name, `${code} ${p.effective_from}`).not.toBe("");
        expect(a.source.url, `${code} ${p.effective_from}`).toMatch(/^https:\/\//);
      }
    }
    expect(data.last_verified).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it.each([
    ["DE", "2020-06-30", 19, [7]],
    ["DE", "2020-07-01", 16, [5]],
    ["DE", "2020-08-01", 16, [5]],
    ["DE", "2020-12-31", 16, [5]],
    ["DE", "2021-01-01", 19, [7]],
    ["EE", "2025-06-30", 22, [13, 9]],
    ["EE", "2025-07-01", 24, [13, 9]],
    ["SK", "2024-12-31", 20, [10]],
    ["SK", "2025-01-01", 23, [19, 5]],
    ["FI", "2024-08-31", 24, [14, 10]],
    ["FI", "2024-09-01", 25.5, [14, 10]],
    ["CZ", "2023-12-31", 21, [15, 10]],
    ["CZ", "2024-01-01", 21, [12]],
    ["CH", "2023-12-31", 7.7, [3.7, 2.5]],
    ["CH", "2024-01-01", 8.1, [3.8, 2.6]],
    ["LU", "2022-12-31", 17, [8]],
    ["LU", "2023-06-15", 16, [7]],
    ["LU", "2024-01-01", 17, [8]],
    ["IE", "2020-08-31", 23, [13.5, 9]],
    ["IE", "2020-09-01", 21, [13.5, 9]],
    ["IE", "2021-02-28", 21, [13.5, 9]],
    ["IE", "2021-03-01", 23, [13.5, 9]],
    ["RO", "2025-07-31", 19, [9, 5]],
    ["RO", "2025-08-01", 21, [11]],
    ["GB", "2022-01-10", 20, [12.5, 5]],
    ["NO", "2020-06-01", 25, [15, 6]],
    ["IS", "2023-03-03", 24, [11]],
  ])("%s on %s: standard %d, reduced %j", (code, date, standard, reduced) => {
    const a = on(code, date);
    expect(a.rates.standard).toBe(standard);
    expect(a.rates.reduced).toEqual(reduced);
  });

  it("reports the period bounds, earlier periods newest first and later ones oldest first", () => {
    const a = on("LU", "2023-06-15");
    expect([a.effective_from, a.effective_to]).toEqual(["2023-01-01", "2023-12-31"]);
    expect(a.rates).toEqual({ standard: 16, reduced: [7], super_reduced: 3, parking: 13, special: [] });
    expect(a.history.map((p) => p.effective_from)).toEqual(["2015-01-01"]);
    expect(a.upcoming.map((p) => [p.effective_from, p.effective_to])).toEqual([["2024-01-01", null]]);
  });

  it("dates territorial exceptions (Azores 18 % → 16 % on 2021-07-01) and resolves aliases", () => {
    const azores = (date: string) => on("PT", date).exceptions.find((e) => e.name === "Azores")?.standard;
    expect(azores("2021-06-30")).toBe(18);
    expect(azores("2021-07-01")).toBe(16);
    expect(on("el", "2024-01-01").country.code).toBe("GR");
    expect(on("UK", "2024-01-01").country.code).toBe("GB");
    expect(ratesOn(data, "US", "2024-01-01")).toEqual({ ok: false, reason: "unknown_country" });
    expect(ratesOn(data, "NL", "2018-12-31")).toEqual({ ok: false, reason: "before_coverage", first: "2019-01-01" });
  });

  it("refuses a dataset with a gap, an overlap, an open period before the last, or a period without a source", () => {
    const broken = (index: number, patch: Record<string, unknown>) => {
      const copy = structuredClone(raw);
      const period: Record<string, unknown> = copy.countries.DE.periods[index] ?? {};
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined) delete period[k];
        else period[k] = v;
      }
      return () => loadVatDataset(copy);
    };
    expect(broken(1, { effective_from: "2020-07-02" })).toThrow(/gap or overlap/);
    expect(broken(0, { effective_to: "2020-07-01" })).toThrow(/gap or overlap/);
    expect(broken(0, { effective_to: undefined })).toThrow(/open-ended/);
    expect(broken(1, { source: {} })).toThrow(/source/);
    expect(broken(0, { source: { ref: "NOPE" } })).toThrow(/unknown source/);
    expect(() => loadVatDataset(structuredClone(raw))).not.toThrow();
  });
});

it("a period from 2023 on must name its own legal basis, not only the generic EC table", () => {
  const data = structuredClone(loadVatDataset()) as unknown as {
    countries: Record<string, { periods: { source: Record<string, string> }[] }>;
  };
  const last = data.countries.CY?.periods.at(-1);
  if (last) last.source = { ref: "EC" };
  expect(() => loadVatDataset(data)).toThrow(/CY period 2023-07-21: source needs a name/);
});
