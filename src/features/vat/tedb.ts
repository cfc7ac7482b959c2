import { parse } from "csv-parse/sync";
import type { VatDataset } from "./dataset.js";
import { canonicalCountry, ratesOn } from "./lookup.js";

/**
 * Diffs the bundled dataset against rates exported from the European Commission's Taxes in
 * Europe Database (TEDB, "VAT rates" search → export), saved as CSV. One row per rate:
 *
 *   Member State , Situation on , Type of rate , Rate
 *   AT           , 2026-07-01   , SUPER_REDUCED , 4.9
 *
 * Headers are matched case-insensitively (`country`/`member state`, `date`/`situation on`,
 * `type`/`type of rate`/`category`, `rate`/`value`); the member state is an ISO code (EL = GR)
 * or an English name; types are STANDARD, REDUCED, SUPER_REDUCED (or "super-reduced") and
 * PARKING; rows of other types (zero, exempt) are skipped. Every (country, date) in the file is
 * compared as sets of rates per kind with the period of ours in force that day.
 */

export interface TedbDifference {
  country: string;
  date: string;
  kind: Kind;
  ours: number[];
  tedb: number[];
}

export interface TedbCheck {
  compared: number;
  skipped: string[];
  differences: TedbDifference[];
}

const KINDS = ["standard", "reduced", "super_reduced", "parking"] as const;
type Kind = (typeof KINDS)[number];

const HEADERS: Record<"country" | "date" | "type" | "rate", string[]> = {
  country: ["member state", "country", "country code", "iso"],
  date: ["situation on", "date", "valid on"],
  type: ["type of rate", "type", "rate type", "category"],
  rate: ["rate", "value", "rate (%)"],
};

export function checkAgainstTedb(data: VatDataset, csv: string): TedbCheck {
  const rows = parse(csv, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as Record<string, string>[];
  const first = rows[0];
  if (!first) return { compared: 0, skipped: [], differences: [] };
  const column = (role: keyof typeof HEADERS): string => {
    const found = Object.keys(first).find((h) => HEADERS[role].includes(h.toLowerCase()));
    if (!found) throw new Error(`TEDB file: no "${HEADERS[role][0]}" column (have: ${Object.keys(first).join(", ")})`);
    return found;
  };
  const [cCol, dCol, tCol, rCol] = [column("country"), column("date"), column("type"), column("rate")];
  const byName = new Map(Object.entries(data.countries).map(([code, c]) => [c.name.toLowerCase(), code]));

  const groups = new Map<string, Record<Kind, Set<number>>>();
  const skipped: string[] = [];
  rows.forEach((row, i) => {
    const line = i + 2;
    const rawCountry = row[cCol] ?? "";
    const code = /^[A-Za-z]{2}$/.test(rawCountry)
      ? canonicalCountry(rawCountry)
      : (byName.get(rawCountry.toLowerCase()) ?? rawCountry);
    const date = (row[dCol] ?? "").slice(0, 10);
    const kind = (row[tCol] ?? "").toLowerCase().replace(/[\s-]+/g, "_") as Kind;
    const rate = Number((row[rCol] ?? "").replace(",", ".").replace("%", ""));
    if (!KINDS.includes(kind)) return; // zero rates, exemptions: not rates we list
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !Number.isFinite(rate)) {
      skipped.push(`line ${line}: unreadable date or rate`);
      return;
    }
    if (!data.countries[code]) {
      skipped.push(`line ${line}: ${rawCountry} is not in the dataset`);
      return;
    }
    const key = `${code} ${date}`;
    let group = groups.get(key);
    if (!group) {
      group = { standard: new Set(), reduced: new Set(), super_reduced: new Set(), parking: new Set() };
      groups.set(key, group);
    }
    group[kind].add(rate);
  });

  const differences: TedbDifference[] = [];
  for (const [key, tedb] of groups) {
    const [country = "", date = ""] = key.split(" ");
    const found = ratesOn(data, country, date);
    if (!found.ok) {
      skipped.push(`${key}: before the dataset's coverage`);
      continue;
    }
    const r = found.answer.rates;
    const ours: Record<Kind, number[]> = {
      standard: [r.standard],
      reduced: r.reduced,
      super_reduced: r.super_reduced === null ? [] : [r.super_reduced],
      parking: r.parking === null ? [] : [r.parking],
    };
    for (const kind of KINDS) {
      const a = [...ours[kind]].sort((x, y) => y - x);
      const b = [...tedb[kind]].sort((x, y) => y - x);
      if (a.join("/") !== b.join("/")) differences.push({ country, date, kind, ours: a, tedb: b });
    }
  }
  return { compared: groups.size, skipped, differences };
}
