import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { VatDataset } from "../../src/features/vat/dataset.js";

/** ibericode/vat-rates (MIT) as shipped next to the repository; read only by tests, never at run time. */
export const IBERICODE_FILE = resolve(
  join(dirname(fileURLToPath(import.meta.url)), "../../../shared/data/vat/ibericode-vat-rates.json"),
);

interface IbericodePeriod {
  effective_from: string;
  rates: Record<string, number>;
  exceptions?: { name: string; standard: number }[];
}

export interface IbericodeFile {
  items: Record<string, IbericodePeriod[]>;
}

export function readIbericode(): IbericodeFile | undefined {
  if (!existsSync(IBERICODE_FILE)) return undefined;
  return JSON.parse(readFileSync(IBERICODE_FILE, "utf8")) as IbericodeFile;
}

/** Comparable view of one country on one day: rates by kind, and exception standard rates by name. */
export interface Snapshot {
  standard: number;
  reduced: string;
  super_reduced: number | null;
  parking: number | null;
  exceptions: Record<string, number>;
}

const fold = (s: string) =>
  s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();

const sortedList = (values: number[]) => [...new Set(values)].sort((a, b) => b - a).join("/");

export function theirsOn(periods: IbericodePeriod[], date: string): Snapshot | undefined {
  const p = periods
    .filter((x) => x.effective_from <= date)
    .sort((a, b) => b.effective_from.localeCompare(a.effective_from))[0];
  if (!p) return undefined;
  const { standard, super_reduced, parking, ...reduced } = p.rates;
  return {
    standard: standard ?? Number.NaN,
    reduced: sortedList(Object.values(reduced)),
    super_reduced: super_reduced ?? null,
    parking: parking ?? null,
    exceptions: Object.fromEntries((p.exceptions ?? []).map((e) => [fold(e.name), e.standard])),
  };
}

/**
 * Ours in the same view. Exceptions are looked up by their names (our entries may group several
 * territories, e.g. "Ceuta and Melilla"); "outside the VAT area" (null) compares as their 0.
 */
export function oursOn(data: VatDataset, iso: string, date: string, theirNames: string[]): Snapshot | undefined {
  const country = data.countries[iso];
  const p = country?.periods.find((x) => x.effective_from <= date && (!x.effective_to || date <= x.effective_to));
  if (!country || !p) return undefined;
  const exceptions: Record<string, number> = {};
  for (const name of theirNames) {
    const e = country.exceptions.find(
      (x) =>
        fold(x.name).includes(name) &&
        (!x.effective_from || x.effective_from <= date) &&
        (!x.effective_to || date <= x.effective_to),
    );
    if (e) exceptions[name] = e.standard ?? 0;
  }
  return {
    standard: p.standard,
    reduced: sortedList(p.reduced),
    super_reduced: p.super_reduced,
    parking: p.parking,
    exceptions,
  };
}
