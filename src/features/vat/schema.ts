import { z } from "@hono/zod-openapi";
import { DateTime } from "luxon";
import { CODE_PATTERN } from "./vat-number.js";

const Source = z.object({ name: z.string(), url: z.string() });

const CODE_INVALID = "must be a two-letter country code (e.g. DE, EL, XI) or a VAT number (e.g. DE136695976)";
const DATE_INVALID = "must be a calendar date YYYY-MM-DD";

// Each check that fails stops the ones after it (`abort`): one problem, said once in fieldErrors.
export const VatQuery = z.object({
  code: z
    .string()
    .trim()
    .min(2, { error: CODE_INVALID, abort: true })
    .max(24, { error: "must be at most 24 characters", abort: true })
    .regex(CODE_PATTERN, CODE_INVALID)
    .openapi({
      param: {
        description:
          "ISO 3166-1 alpha-2 country code, case-insensitive (`EL` = Greece, `UK` = GB, `XI` = Northern Ireland), " +
          "or a VAT number such as `DE136695976` (spaces, dots and dashes allowed).",
      },
      example: "DE",
    }),
  date: z
    .string()
    .max(10, { error: DATE_INVALID, abort: true })
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: DATE_INVALID, abort: true })
    .refine((v) => DateTime.fromISO(v, { zone: "UTC" }).isValid, "must be a real calendar date YYYY-MM-DD")
    .optional()
    .openapi({
      param: { description: "Calendar date in the country's civil time. Default: today there." },
      format: "date",
      example: "2020-08-01",
    }),
});

const Rates = z
  .object({
    standard: z.number(),
    reduced: z.array(z.number()).openapi({ description: "Reduced rates of 5 % or more, highest first." }),
    super_reduced: z.number().nullable().openapi({ description: "EU super-reduced rate (below 5 %), if any." }),
    parking: z.number().nullable().openapi({ description: "EU parking rate (Art. 118), if any." }),
    special: z.array(
      z
        .object({
          rate: z.number().openapi({ example: 11.11 }),
          applies_to: z.string().openapi({ example: "First-hand sale of raw fish (wild marine resources)" }),
          source: Source,
        })
        .openapi("VatSpecialRate", {
          description:
            "A rate for one named kind of supply outside the standard/reduced scheme (Norway's 11.11 % on raw fish), with its source.",
        }),
    ),
  })
  .openapi("VatRates");

const Period = z
  .object({
    effective_from: z.string(),
    effective_to: z.string().nullable(),
    rates: Rates,
    source: Source,
    notes: z.array(z.string()),
  })
  .openapi("VatPeriod");

const Registration = z.object({
  status: z.enum(["valid", "invalid", "unknown"]),
  checked: z.boolean().openapi({ description: "A registry was asked (or a cached answer of one was used)." }),
  registry: z.string().nullable(),
  reason: z.string().optional(),
  name: z.string().nullable(),
  address: z.string().nullable(),
  checked_at: z.string().nullable(),
  cached: z.boolean(),
});

export const VatResponse = z
  .object({
    query: z.object({ code: z.string(), date: z.string().nullable() }),
    country: z.object({
      code: z.string(),
      name: z.string(),
      vat_prefix: z.string(),
      currency: z.string(),
      tz: z.string().openapi({ description: "IANA time zone of the country's civil dates." }),
      time_zone: z.string().openapi({ deprecated: true, description: "Old name of `tz`." }),
      eu_member: z.boolean(),
    }),
    date: z.string().openapi({ description: "The civil date the rates are for." }),
    rates: Rates,
    effective_from: z.string(),
    effective_to: z.string().nullable(),
    source: Source,
    notes: z.array(z.string()),
    history: z.array(Period).openapi({ description: "Earlier periods, newest first." }),
    upcoming: z.array(Period).openapi({ description: "Known later periods, oldest first." }),
    exceptions: z.array(
      z.object({
        name: z.string(),
        treatment: z.enum(["outside_vat_area", "special_rate", "same_as_country", "other_country_rates"]),
        standard: z.number().nullable(),
        reduced: z.array(z.number()).optional(),
        super_reduced: z.number().optional(),
        note: z.string(),
      }),
    ),
    last_verified: z.string(),
    coverage_from: z.string(),
    vat_number: z
      .object({
        normalized: z.string(),
        supported: z.boolean(),
        format_valid: z.boolean().nullable(),
        checksum_valid: z.boolean().nullable(),
        verdict: z.enum(["valid", "invalid_format", "invalid_checksum", "unsupported"]),
        registration: Registration,
      })
      .optional()
      .openapi({ description: "Present when `code` is a VAT number." }),
  })
  .openapi("VatAnswer");

export type VatResponseBody = z.infer<typeof VatResponse>;
