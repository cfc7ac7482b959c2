import { ApiError } from "../../http/errors.js";
import type { Cache } from "../../ports/cache.js";
import type { Place, PostcodeResolver, Resolution } from "../../ports/postcode-resolver.js";
import { UpstreamError } from "../../ports/upstream-error.js";
import { CachedLoader } from "../shared/cached-loader.js";
import { normalisePostcode } from "./format.js";
import { RESOLVER_FAILED } from "./schema.js";

const DAY_MS = 24 * 60 * 60 * 1000;
export const PLACE_TTL_MS = 7 * DAY_MS;
export const UNKNOWN_TTL_MS = 60 * 60 * 1000;

export type NotFoundReason = "invalid_format" | "unknown" | "terminated" | "no_location";

/** The spec's 404 for a postcode (§4 GET rule 3), with the reason telling which case. */
export function postcodeNotFound(reason: NotFoundReason, details?: Record<string, unknown>): ApiError {
  return new ApiError("not_found", "postcode not found", { reason, details });
}

/**
 * Postcode → place: validate and normalise, then resolve through the cache (places and
 * retired postcodes for 7 days, unknown postcodes for an hour), one upstream call per
 * postcode however many ask at once. Throws the ApiError the route should answer with.
 */
export class PlaceLookup {
  private readonly loader: CachedLoader;

  constructor(
    private readonly resolver: PostcodeResolver,
    cache: Cache,
  ) {
    this.loader = new CachedLoader(cache);
  }

  async find(input: string): Promise<Place> {
    const postcode = normalisePostcode(input);
    if (!postcode) throw postcodeNotFound("invalid_format");
    let resolution: Resolution;
    try {
      resolution = await this.loader.load<Resolution>(
        `postcode:v1:${postcode}`,
        (r) => (r.kind === "unknown" ? UNKNOWN_TTL_MS : PLACE_TTL_MS),
        () => this.resolver.resolve(postcode),
      );
    } catch (err) {
      if (err instanceof UpstreamError) {
        throw new ApiError("upstream_error", RESOLVER_FAILED, { cause: err });
      }
      throw err;
    }
    if (resolution.kind === "unknown") throw postcodeNotFound("unknown");
    if (resolution.kind === "terminated") {
      throw postcodeNotFound("terminated", {
        postcode: resolution.postcode,
        year_terminated: resolution.year,
        month_terminated: resolution.month,
      });
    }
    return resolution.place;
  }
}
