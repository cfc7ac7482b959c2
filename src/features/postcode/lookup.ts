import { fail, ok, type Result } from "../../lib/result.js";
import type { Cache } from "../../ports/cache.js";
import type { Place, PostcodeResolver, Resolution } from "../../ports/postcode-resolver.js";
import { UpstreamError } from "../../ports/upstream-error.js";
import { CachedLoader } from "../shared/cached-loader.js";
import { normalisePostcode } from "./format.js";

const DAY_MS = 24 * 60 * 60 * 1000;
export const PLACE_TTL_MS = 7 * DAY_MS;
export const UNKNOWN_TTL_MS = 60 * 60 * 1000;

export type NotFoundReason = "invalid_format" | "unknown" | "terminated" | "no_location";

/** Why a postcode has no place: not one (with the reason and its details), or the resolver failed. */
export type PlaceFailure =
  | { kind: "not_found"; reason: NotFoundReason; details?: Record<string, unknown> }
  | { kind: "upstream"; cause: UpstreamError };

/**
 * Postcode → place: validate and normalise, then resolve through the cache (places and
 * retired postcodes for 7 days, unknown postcodes for an hour), one upstream call per
 * postcode however many ask at once. An expected failure is returned, not thrown (errors.ts
 * maps it to the route's answer).
 */
export class PlaceLookup {
  private readonly loader: CachedLoader;

  constructor(
    private readonly resolver: PostcodeResolver,
    cache: Cache,
  ) {
    this.loader = new CachedLoader(cache);
  }

  async find(input: string): Promise<Result<Place, PlaceFailure>> {
    const postcode = normalisePostcode(input);
    if (!postcode) return fail({ kind: "not_found", reason: "invalid_format" });
    let resolution: Resolution;
    try {
      resolution = await this.loader.load<Resolution>(
        `postcode:v1:${postcode}`,
        (r) => (r.kind === "unknown" ? UNKNOWN_TTL_MS : PLACE_TTL_MS),
        () => this.resolver.resolve(postcode),
      );
    } catch (err) {
      if (err instanceof UpstreamError) return fail({ kind: "upstream", cause: err });
      throw err;
    }
    if (resolution.kind === "unknown") return fail({ kind: "not_found", reason: "unknown" });
    if (resolution.kind === "terminated") {
      return fail({
        kind: "not_found",
        reason: "terminated",
        details: {
          postcode: resolution.postcode,
          year_terminated: resolution.year,
          month_terminated: resolution.month,
        },
      });
    }
    return ok(resolution.place);
  }
}
