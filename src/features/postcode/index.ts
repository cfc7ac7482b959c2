// The postcode feature's public face: what other features (weather) and the composition root use.
export { placeFailureError } from "./errors.js";
export { type PlaceFailure, PlaceLookup } from "./lookup.js";
export { registerPostcode } from "./route.js";
export { FORECAST_FAILED, PostcodeQuery, postcodeErrorResponses, RESOLVER_FAILED, SourceSchema } from "./schema.js";
export { postcodesIoSource, type Source } from "./sources.js";
