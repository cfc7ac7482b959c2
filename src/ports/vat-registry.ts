/** Registration verdict of a VAT registry. An outage is `unknown`, never `invalid`. */
export type RegistrationStatus = "valid" | "invalid" | "unknown";

export interface RegistrationResult {
  status: RegistrationStatus;
  /** Trader name and address as the registry gives them (null when withheld). */
  name: string | null;
  address: string | null;
  /** When the registry answered (ISO instant), for `valid`/`invalid`. */
  checked_at: string | null;
  /** Why the status is `unknown` (e.g. `timeout`, `MS_UNAVAILABLE`). */
  reason?: string;
  /** Served from the cache rather than a fresh registry call. */
  cached?: boolean;
}

/** A VAT registration registry (VIES). `country` is the VIES member-state code (EL, XI, DE, …). */
export interface VatRegistry {
  readonly name: string;
  /** VIES member-state codes this registry answers for. */
  covers(country: string): boolean;
  check(country: string, number: string): Promise<RegistrationResult>;
}
