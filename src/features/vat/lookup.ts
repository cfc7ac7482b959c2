import type { VatCountry, VatDataset, VatException, VatPeriod } from "./dataset.js";

/** Codes people use that are not the ISO 3166-1 code of the country we store. */
const ALIASES: Record<string, string> = { EL: "GR", UK: "GB" };

export function canonicalCountry(code: string): string {
  const upper = code.toUpperCase();
  return ALIASES[upper] ?? upper;
}

export interface SpecialRate {
  rate: number;
  applies_to: string;
  source: { name: string; url: string };
}

export interface Rates {
  standard: number;
  reduced: number[];
  super_reduced: number | null;
  parking: number | null;
  /** Rates for one named kind of supply outside the scheme above, each with its source. */
  special: SpecialRate[];
}

export interface PeriodView {
  effective_from: string;
  effective_to: string | null;
  rates: Rates;
  source: { name: string; url: string };
  notes: string[];
}

export interface ExceptionView {
  name: string;
  treatment: VatException["treatment"];
  standard: number | null;
  reduced?: number[];
  super_reduced?: number;
  note: string;
}

export interface VatRatesAnswer {
  country: {
    code: string;
    name: string;
    vat_prefix: string;
    currency: string;
    tz: string;
    /** Old name of `tz`, kept for existing clients. */
    time_zone: string;
    eu_member: boolean;
  };
  date: string;
  rates: Rates;
  effective_from: string;
  effective_to: string | null;
  source: { name: string; url: string };
  notes: string[];
  history: PeriodView[];
  upcoming: PeriodView[];
  exceptions: ExceptionView[];
  last_verified: string;
  coverage_from: string;
}

export type RatesLookup =
  | { ok: true; answer: VatRatesAnswer }
  | { ok: false; reason: "unknown_country" }
  | { ok: false; reason: "before_coverage"; first: string };

/** A period's (or special rate's) source with its `ref` resolved. */
function sourceOf(data: VatDataset, source: VatPeriod["source"]): { name: string; url: string } {
  const ref = source.ref ? data.sources[source.ref] : undefined;
  return { name: source.name ?? ref?.name ?? "", url: source.url ?? ref?.url ?? "" };
}

function view(data: VatDataset, p: VatPeriod): PeriodView {
  return {
    effective_from: p.effective_from,
    effective_to: p.effective_to ?? null,
    rates: {
      standard: p.standard,
      reduced: p.reduced,
      super_reduced: p.super_reduced,
      parking: p.parking,
      special: (p.special ?? []).map((r) => ({ ...r, source: sourceOf(data, r.source) })),
    },
    source: sourceOf(data, p.source),
    notes: p.notes ?? [],
  };
}

function inForce(from: string | undefined, to: string | undefined, date: string): boolean {
  return (from === undefined || from <= date) && (to === undefined || date <= to);
}

function exceptionsOn(country: VatCountry, date: string): ExceptionView[] {
  return country.exceptions
    .filter((e) => inForce(e.effective_from, e.effective_to, date))
    .map(({ effective_from: _f, effective_to: _t, ...rest }) => rest);
}

/**
 * The rates of `code` in force on `date` (an ISO calendar date in the country's civil time).
 * Dates compare as strings, so a period covers whole days from its first to its last day.
 */
export function ratesOn(data: VatDataset, code: string, date: string): RatesLookup {
  const iso = canonicalCountry(code);
  const country = data.countries[iso];
  if (!country) return { ok: false, reason: "unknown_country" };
  const index = country.periods.findIndex((p) => inForce(p.effective_from, p.effective_to, date));
  const first = country.periods[0]?.effective_from ?? "";
  const current = country.periods[index];
  if (!current) return { ok: false, reason: "before_coverage", first };
  const now = view(data, current);
  return {
    ok: true,
    answer: {
      country: {
        code: iso,
        name: country.name,
        vat_prefix: country.vat_prefix,
        currency: country.currency,
        tz: country.time_zone,
        time_zone: country.time_zone,
        eu_member: country.eu_member,
      },
      date,
      rates: now.rates,
      effective_from: now.effective_from,
      effective_to: now.effective_to,
      source: now.source,
      notes: now.notes,
      history: country.periods
        .slice(0, index)
        .reverse()
        .map((p) => view(data, p)),
      upcoming: country.periods.slice(index + 1).map((p) => view(data, p)),
      exceptions: exceptionsOn(country, date),
      last_verified: data.last_verified,
      coverage_from: data.coverage_from,
    },
  };
}

/** The time zone whose calendar decides "today" for `code`, or undefined for an unknown code. */
export function countryTimeZone(data: VatDataset, code: string): string | undefined {
  return data.countries[canonicalCountry(code)]?.time_zone;
}
