/** A resolved UK postcode. Coordinates are null for the few postcodes without a grid reference. */
export interface Place {
  postcode: string;
  outcode: string;
  incode: string;
  latitude: number | null;
  longitude: number | null;
  eastings: number | null;
  northings: number | null;
  country: string | null;
  region: string | null;
  admin_district: string | null;
  admin_county: string | null;
  admin_ward: string | null;
  parish: string | null;
  parliamentary_constituency: string | null;
}

export type Resolution =
  | { kind: "found"; place: Place }
  | { kind: "terminated"; postcode: string; year: number; month: number }
  | { kind: "unknown" };

/**
 * Resolves a normalised, already validated postcode (`SW1A 2AA`). Throws `UpstreamError`
 * when the resolver fails, times out, redirects or answers something unreadable.
 */
export interface PostcodeResolver {
  resolve(postcode: string): Promise<Resolution>;
}
