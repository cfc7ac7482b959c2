import { type Country, checkVAT, countries } from "jsvat";
import { canonicalCountry } from "./lookup.js";

/** What a `code` query value is, once separators are removed. */
export type ParsedCode =
  | { kind: "country"; country: string }
  | { kind: "vat_number"; country: string; normalized: string; number: string };

/** Separators people type inside VAT numbers ("DE 136-695.976", "CHE-116.281.710 MWST"). */
const SEPARATORS = /[\s.\-/]+/g;

/** Accepted shapes: a two-letter country code, or two letters followed by a number with at least one digit. */
export const CODE_PATTERN = /^[A-Za-z]{2}([A-Za-z0-9\s.\-/]*\d[A-Za-z0-9\s.\-/]*)?$/;

export function parseCode(code: string): ParsedCode {
  const compact = code.trim().replace(SEPARATORS, "").toUpperCase();
  const prefix = compact.slice(0, 2);
  if (compact.length === 2) return { kind: "country", country: canonicalCountry(prefix) };
  // Greece's VAT prefix is EL; people also write GR.
  const normalized = prefix === "GR" ? `EL${compact.slice(2)}` : compact;
  return { kind: "vat_number", country: canonicalCountry(prefix), normalized, number: normalized.slice(2) };
}

export interface VatNumberVerdict {
  normalized: string;
  /** jsvat knows this country's format and checksum rules. */
  supported: boolean;
  format_valid: boolean | null;
  checksum_valid: boolean | null;
  verdict: "valid" | "invalid_format" | "invalid_checksum" | "unsupported";
}

function jsvatCountry(iso: string): Country | undefined {
  return countries.find((c) => c.codes[0] === iso);
}

/**
 * Offline format and checksum verdict by jsvat. Northern Ireland (XI) numbers follow the GB
 * rules, which jsvat knows only under the GB prefix.
 */
export function checkVatNumber(country: string, normalized: string): VatNumberVerdict {
  const rulesOf = country === "XI" ? "GB" : country;
  const rules = jsvatCountry(rulesOf);
  if (!rules) return { normalized, supported: false, format_valid: null, checksum_valid: null, verdict: "unsupported" };
  const candidate = country === "XI" ? `GB${normalized.slice(2)}` : normalized;
  const result = checkVAT(candidate, [rules]);
  const formatValid = result.isValidFormat;
  const checksumValid = formatValid ? result.isValid : null;
  return {
    normalized,
    supported: true,
    format_valid: formatValid,
    checksum_valid: checksumValid,
    verdict: !formatValid ? "invalid_format" : checksumValid ? "valid" : "invalid_checksum",
  };
}
