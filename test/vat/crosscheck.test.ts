import { describe, expect, it } from "vitest";
import { loadVatDataset } from "../../src/features/vat/dataset.js";
import { skippedBecause } from "../helpers/env.js";
import { IBERICODE_FILE, oursOn, readIbericode, type Snapshot, theirsOn } from "./ibericode.js";

/**
 * Every known difference between our dataset and ibericode/vat-rates, with the reason we keep
 * ours. A difference not listed here fails the test, and so does an entry that no longer matches
 * any difference (so the list cannot rot).
 */
const ALLOWED: {
  country: string;
  from: string;
  to?: string;
  field: string;
  ours: unknown;
  theirs: unknown;
  reason: string;
}[] = [
  {
    country: "AT",
    from: "2020-07-01",
    to: "2021-12-31",
    field: "reduced",
    ours: "13/10/5",
    theirs: "13/10",
    reason:
      "Austria's temporary 5 % rate for gastronomy, accommodation, culture and publications (UStG § 28 Abs. 52) is a rate in force; ibericode does not model it.",
  },
  {
    country: "EE",
    from: "2022-01-01",
    to: "2023-12-31",
    field: "reduced",
    ours: "9/5",
    theirs: "9",
    reason: "Estonia taxed press publications at 5 % from 2022-01-01; ibericode starts the 5 % rate only in 2024.",
  },
  {
    country: "SI",
    from: "2019-01-01",
    to: "2019-12-31",
    field: "reduced",
    ours: "9.5",
    theirs: "9.5/5",
    reason:
      "Slovenia's 5 % rate (books, newspapers, e-publications) applies from 2020-01-01 (ZDDV-1N); ibericode back-dates it to its first period.",
  },
  {
    country: "LU",
    from: "2019-01-01",
    to: "2022-12-31",
    field: "parking",
    ours: 14,
    theirs: 13,
    reason:
      "The European Commission's VAT rates table lists Luxembourg's 14 % intermediate rate as its parking rate from 2015 to 2022 (13 % only during the 2023 one-point cut); ibericode has 13 % there.",
  },
  {
    country: "GB",
    from: "2021-10-01",
    to: "2022-03-31",
    field: "reduced",
    ours: "12.5/5",
    theirs: "5",
    reason:
      "HMRC's temporary 12.5 % reduced rate for hospitality, holiday accommodation and attractions (2021-10-01..2022-03-31); ibericode does not model it.",
  },
  {
    country: "FI",
    from: "2026-01-01",
    field: "reduced",
    ours: "13.5/10",
    theirs: "14/10",
    reason:
      "Finland lowers the 14 % rate to 13.5 % from 2026-01-01 (2026 budget); the ibericode snapshot predates it. Our period note says the act was not checked against Finlex.",
  },
  {
    country: "CY",
    from: "2023-07-21",
    field: "super_reduced",
    ours: 3,
    theirs: null,
    reason:
      "Cyprus added a 3 % super-reduced rate (books, newspapers, pharmaceuticals…) on 2023-07-21, listed in the EC's 2024 table; the ibericode snapshot does not have it.",
  },
  {
    country: "MT",
    from: "2024-01-01",
    field: "reduced",
    ours: "12/7/5",
    theirs: "7/5",
    reason:
      "Malta's 12 % rate (fund management, credit services, safe-keeping) is in the EC's 2024 table; ibericode omits it.",
  },
  {
    country: "LT",
    from: "2026-01-01",
    field: "reduced",
    ours: "12/5",
    theirs: "9/5",
    reason:
      "Lithuania's 2025 reform abolishes the 9 % rate and adds 12 % from 2026-01-01; the ibericode snapshot (2025-08) predates it.",
  },
  {
    country: "AT",
    from: "2026-07-01",
    field: "super_reduced",
    ours: 4.9,
    theirs: null,
    reason: "Austria's 4.9 % rate on basic foods from 2026-07-01 postdates the ibericode snapshot (2025-08).",
  },
  {
    country: "PT",
    from: "2021-07-01",
    field: "exception:azores",
    ours: 16,
    theirs: 18,
    reason: "The Azores lowered their standard rate from 18 % to 16 % on 2021-07-01; ibericode still has 18 %.",
  },
];

function allowed(country: string, date: string, field: string, ours: unknown, theirs: unknown) {
  return ALLOWED.findIndex(
    (a) =>
      a.country === country &&
      a.from <= date &&
      (a.to === undefined || date <= a.to) &&
      a.field === field &&
      JSON.stringify(a.ours) === JSON.stringify(ours) &&
      JSON.stringify(a.theirs) === JSON.stringify(theirs),
  );
}

const theirs = readIbericode();
const ALIASES: Record<string, string> = { GR: "GR", EL: "GR", UK: "GB" };

describe.skipIf(!theirs)(
  `VAT dataset cross-checked against ibericode/vat-rates (${IBERICODE_FILE})${skippedBecause(!theirs, `${IBERICODE_FILE} is absent`)}`,
  () => {
    const data = loadVatDataset();
    const items = theirs?.items ?? {};

    it("every overlapping country and period agrees, or the difference is explained", () => {
      const unexplained: string[] = [];
      const used = new Set<number>();
      let compared = 0;
      for (const [code, periods] of Object.entries(items)) {
        const iso = ALIASES[code] ?? code;
        const ourCountry = data.countries[iso];
        if (!ourCountry) {
          unexplained.push(`${code}: in ibericode but not in our dataset`);
          continue;
        }
        // Both datasets are step functions: comparing on every day either one changes covers every segment.
        const days = new Set([data.coverage_from]);
        for (const p of periods) if (p.effective_from > data.coverage_from) days.add(p.effective_from);
        for (const p of ourCountry.periods) if (p.effective_from > data.coverage_from) days.add(p.effective_from);
        for (const e of ourCountry.exceptions) if (e.effective_from) days.add(e.effective_from);
        for (const day of [...days].sort()) {
          const t = theirsOn(periods, day);
          if (!t) continue;
          const o = oursOn(data, iso, day, Object.keys(t.exceptions));
          if (!o) {
            unexplained.push(`${code} ${day}: no period of ours`);
            continue;
          }
          compared++;
          const fields: [string, unknown, unknown][] = (
            ["standard", "reduced", "super_reduced", "parking"] as const
          ).map((f) => [f, o[f as keyof Snapshot], t[f as keyof Snapshot]]);
          for (const [name, rate] of Object.entries(t.exceptions)) {
            fields.push([`exception:${name}`, o.exceptions[name] ?? "missing", rate]);
          }
          for (const [field, ours, their] of fields) {
            if (JSON.stringify(ours) === JSON.stringify(their)) continue;
            const i = allowed(iso, day, field, ours, their);
            if (i < 0)
              unexplained.push(
                `${iso} ${day} ${field}: ours ${JSON.stringify(ours)}, ibericode ${JSON.stringify(their)}`,
              );
            else used.add(i);
          }
        }
      }
      expect(compared).toBeGreaterThan(28);
      expect(unexplained).toEqual([]);
      const stale = ALLOWED.filter((_, i) => !used.has(i)).map((a) => `${a.country} ${a.field} ${a.from}`);
      expect(stale).toEqual([]);
    });
  },
);
