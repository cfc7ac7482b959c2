/**
 * UK postcode format by Royal Mail's letter-position rules (the PAF programmers' guide and the
 * government data standard), not merely "looks like a postcode":
 *
 * - outward code: A9, A99, AA9, AA99, A9A or AA9A;
 *   1st letter never Q, V or X; 2nd letter never I, J or Z;
 *   a letter in 3rd position (A9A) only A B C D E F G H J K P S T U W;
 *   a letter in 4th position (AA9A) only A B E H M N P R V W X Y;
 * - inward code: a digit then two letters, never C I K M O or V;
 * - plus the non-geographic exceptions Royal Mail issues: `GIR 0AA` (Girobank) and the
 *   British overseas territories' single postcodes.
 */
const OUTWARD =
  "(?:[A-PR-UWYZ][0-9][0-9]?|[A-PR-UWYZ][A-HK-Y][0-9][0-9]?|[A-PR-UWYZ][0-9][A-HJKPSTUW]|[A-PR-UWYZ][A-HK-Y][0-9][ABEHMNPRVWXY])";
const INWARD = "[0-9][ABD-HJLNP-UW-Z]{2}";
const ROYAL_MAIL = new RegExp(`^(${OUTWARD})(${INWARD})$`);

/** Royal Mail's special postcodes that follow none of the outward patterns. */
export const SPECIAL_POSTCODES: ReadonlySet<string> = new Set([
  "GIR 0AA", // Girobank, Bootle
  "ASCN 1ZZ", // Ascension Island
  "BBND 1ZZ", // British Indian Ocean Territory
  "BIQQ 1ZZ", // British Antarctic Territory
  "FIQQ 1ZZ", // Falkland Islands
  "PCRN 1ZZ", // Pitcairn Islands
  "SIQQ 1ZZ", // South Georgia and the South Sandwich Islands
  "STHL 1ZZ", // Saint Helena
  "TDCU 1ZZ", // Tristan da Cunha
  "TKCA 1ZZ", // Turks and Caicos Islands
]);

/** Longest input worth looking at: a full postcode is at most 8 characters plus spacing. */
const MAX_INPUT = 16;

/** `SW1A 2AA` for any spacing or case of a postcode Royal Mail's rules allow, else null. */
export function normalisePostcode(input: string): string | null {
  if (input.length > MAX_INPUT) return null;
  const compact = input.replace(/\s+/g, "").toUpperCase();
  if (compact.length < 5 || compact.length > 7) return null;
  const spaced = `${compact.slice(0, -3)} ${compact.slice(-3)}`;
  if (SPECIAL_POSTCODES.has(spaced)) return spaced;
  return ROYAL_MAIL.test(compact) ? spaced : null;
}
