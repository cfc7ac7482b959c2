import { z } from "zod";
import raw from "./data/rates.json" with { type: "json" };

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

const SourceSchema = z
  .object({ ref: z.string().optional(), name: z.string().min(1).optional(), url: z.url().optional() })
  .refine((s) => s.ref !== undefined || (s.name !== undefined && s.url !== undefined), {
    message: "a source needs a ref or both name and url",
  });

/** A rate outside the standard/reduced scheme, for one named kind of supply (Norway's raw fish). */
const SpecialRateSchema = z.object({
  rate: z.number().positive(),
  applies_to: z.string().min(1),
  source: SourceSchema,
});

const PeriodSchema = z.object({
  effective_from: isoDate,
  effective_to: isoDate.optional(),
  standard: z.number().positive(),
  reduced: z.array(z.number().positive()),
  super_reduced: z.number().positive().nullable(),
  parking: z.number().positive().nullable(),
  special: z.array(SpecialRateSchema).optional(),
  source: SourceSchema,
  notes: z.array(z.string()).optional(),
});

const ExceptionSchema = z.object({
  name: z.string(),
  treatment: z.enum(["outside_vat_area", "special_rate", "same_as_country", "other_country_rates"]),
  standard: z.number().nonnegative().nullable(),
  reduced: z.array(z.number().nonnegative()).optional(),
  super_reduced: z.number().nonnegative().optional(),
  effective_from: isoDate.optional(),
  effective_to: isoDate.optional(),
  note: z.string(),
});

const CountrySchema = z.object({
  name: z.string(),
  vat_prefix: z.string(),
  currency: z.string().length(3),
  time_zone: z.string(),
  eu_member: z.boolean(),
  periods: z.array(PeriodSchema).min(1),
  exceptions: z.array(ExceptionSchema),
});

const DatasetSchema = z.object({
  dataset: z.string(),
  coverage_from: isoDate,
  last_verified: isoDate,
  verification: z.string(),
  rate_kinds: z.string(),
  sources: z.record(z.string(), z.object({ name: z.string(), url: z.url() })),
  countries: z.record(z.string().regex(/^[A-Z]{2}$/), CountrySchema),
});

/** Periods starting on or after this date must name their own legal basis, not only a generic table. */
const NAMED_SOURCE_FROM = "2023-01-01";

export type VatDataset = z.infer<typeof DatasetSchema>;
export type VatCountry = z.infer<typeof CountrySchema>;
export type VatPeriod = z.infer<typeof PeriodSchema>;
export type VatException = z.infer<typeof ExceptionSchema>;

/**
 * Parses and checks the bundled dataset: periods sorted, contiguous (each starts the day after
 * the previous ends), only the last one open-ended, every source resolvable. Throws on a bad file
 * so a broken edit fails at start and in tests, never at request time.
 */
export function loadVatDataset(input: unknown = raw): VatDataset {
  const data = DatasetSchema.parse(input);
  for (const [code, country] of Object.entries(data.countries)) {
    country.periods.forEach((p, i) => {
      const where = `${code} period ${p.effective_from}`;
      for (const source of [p.source, ...(p.special ?? []).map((r) => r.source)]) {
        if (source.ref !== undefined && !data.sources[source.ref]) throw new Error(`${where}: unknown source ref`);
      }
      if (p.effective_to !== undefined && p.effective_to < p.effective_from) throw new Error(`${where}: ends first`);
      if (p.effective_from >= NAMED_SOURCE_FROM && !p.source.name) throw new Error(`${where}: source needs a name`);
      const next = country.periods[i + 1];
      if (!next) return;
      if (p.effective_to === undefined) throw new Error(`${where}: only the last period may be open-ended`);
      if (next.effective_from !== nextDay(p.effective_to)) throw new Error(`${where}: gap or overlap before next`);
    });
  }
  return data;
}

/** The calendar day after an ISO date. */
export function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
