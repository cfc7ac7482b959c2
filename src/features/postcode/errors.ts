import { ApiError } from "../../http/errors.js";
import type { PlaceFailure } from "./lookup.js";
import { RESOLVER_FAILED } from "./schema.js";

/** The answer to a postcode without a place: the spec's 404 (its reason says which case), or a 502. */
export function placeFailureError(failure: PlaceFailure): ApiError {
  if (failure.kind === "upstream") return new ApiError("upstream_error", RESOLVER_FAILED, { cause: failure.cause });
  return new ApiError("not_found", "postcode not found", { reason: failure.reason, details: failure.details });
}
