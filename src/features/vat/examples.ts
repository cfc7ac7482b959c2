import { errorResponse } from "../shared/responses.js";
import type { VatResponseBody } from "./schema.js";

const EC = "https://taxation-customs.ec.europa.eu/taxation/vat/vat-directive/vat-rates_en";

/** `GET /v1/vat?code=DE136695976&date=2020-08-01` with VIES configured (a test keeps it true). */
export const VAT_EXAMPLE: VatResponseBody = {
  query: { code: "DE136695976", date: "2020-08-01" },
  country: {
    code: "DE",
    name: "Germany",
    vat_prefix: "DE",
    currency: "EUR",
    tz: "Europe/Berlin",
    time_zone: "Europe/Berlin",
    eu_member: true,
  },
  date: "2020-08-01",
  rates: { standard: 16, reduced: [5], super_reduced: null, parking: null, special: [] },
  effective_from: "2020-07-01",
  effective_to: "2020-12-31",
  source: {
    name: "Zweites Corona-Steuerhilfegesetz of 29 June 2020 (BGBl. I 2020 S. 1512), UStG § 28",
    url: "https://www.bundesfinanzministerium.de/",
  },
  notes: ["Temporary reduction for the second half of 2020."],
  history: [
    {
      effective_from: "2007-01-01",
      effective_to: "2020-06-30",
      rates: { standard: 19, reduced: [7], super_reduced: null, parking: null, special: [] },
      source: { name: "Umsatzsteuergesetz (UStG) § 12; EC VAT rates table", url: EC },
      notes: [],
    },
  ],
  upcoming: [
    {
      effective_from: "2021-01-01",
      effective_to: null,
      rates: { standard: 19, reduced: [7], super_reduced: null, parking: null, special: [] },
      source: { name: "UStG § 12 (rates restored after UStG § 28 expired); EC VAT rates table", url: EC },
      notes: [
        "Restaurant meals (not drinks) were taxed at 7 % from 2020-07-01 to 2023-12-31 and natural gas / district heating from 2022-10-01 to 2024-03-31 (category changes). Restaurant meals return to 7 % from 2026-01-01 (announced in the 2025 tax amendment act; category change).",
      ],
    },
  ],
  exceptions: [
    {
      name: "Heligoland",
      treatment: "outside_vat_area",
      standard: null,
      note: "Outside the EU VAT area (Directive 2006/112/EC Art. 6(2)).",
    },
    {
      name: "Büsingen am Hochrhein",
      treatment: "other_country_rates",
      standard: null,
      note: "Outside the EU VAT area; Swiss VAT applies (see CH).",
    },
  ],
  last_verified: "2026-11-22",
  coverage_from: "2019-01-01",
  vat_number: {
    normalized: "DE136695976",
    supported: true,
    format_valid: true,
    checksum_valid: true,
    verdict: "valid",
    registration: {
      status: "valid",
      checked: true,
      registry: "VIES",
      name: null,
      address: null,
      checked_at: "2026-11-21T10:15:00.000Z",
      cached: false,
    },
  },
};

export const vatErrorResponses = {
  400: errorResponse("A query parameter is missing or invalid; the message names it.", {
    code_missing: { code: "invalid_body", message: 'query parameter "code" is required' },
    code_malformed: {
      code: "invalid_body",
      message:
        'query parameter "code" is invalid: must be a two-letter country code (e.g. DE, EL, XI) or a VAT number (e.g. DE136695976)',
    },
    date: { code: "invalid_body", message: 'query parameter "date" is invalid: must be a calendar date YYYY-MM-DD' },
  }),
  404: errorResponse("No VAT data for that country (or for that date).", {
    unknown_country: {
      code: "not_found",
      message: 'Unknown country code "US": no VAT rates on record for it.',
      reason: "unknown_country",
    },
    before_coverage: {
      code: "not_found",
      message: "No VAT rates on record for NL on 2010-01-01: the data starts on 2019-01-01.",
      reason: "before_coverage",
    },
  }),
} as const;
