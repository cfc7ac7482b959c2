import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../../app-deps.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import { placeFailureError } from "./errors.js";
import type { PlaceLookup } from "./lookup.js";
import { PostcodeQuery, PostcodeResponse, placeView, postcodeErrorResponses, RESOLVER_FAILED } from "./schema.js";
import { postcodesIoSource } from "./sources.js";

/** A place may be kept a day (the server keeps it 7); a 200 without Cache-Control is heuristically cacheable. */
const PLACE_CACHE_CONTROL = "public, max-age=86400";

const route = createRoute({
  method: "get",
  path: "/v1/postcode",
  tags: ["Lookups"],
  summary: "Resolve a UK postcode",
  description:
    "Normalises and validates a UK postcode, then resolves it through postcodes.io: location, " +
    "administrative areas and grid reference. Cached for 7 days (unknown postcodes for 1 hour).",
  request: { query: PostcodeQuery },
  responses: {
    200: {
      description: "The postcode's place.",
      headers: {
        "Cache-Control": {
          description: `\`${PLACE_CACHE_CONTROL}\`: a postcode's place changes rarely.`,
          required: true,
          schema: { type: "string", maxLength: 64, example: PLACE_CACHE_CONTROL },
        },
      },
      content: {
        "application/json": {
          schema: PostcodeResponse,
          example: {
            postcode: "SW1A 2AA",
            outcode: "SW1A",
            incode: "2AA",
            lat: 51.50354,
            lon: -0.127695,
            latitude: 51.50354,
            longitude: -0.127695,
            eastings: 530047,
            northings: 179951,
            district: "Westminster",
            county: null,
            ward: "St James's",
            parish: "Westminster, unparished area",
            constituency: "Cities of London and Westminster",
            region: "London",
            country: "England",
            sources: [postcodesIoSource(2025)],
          },
        },
      },
    },
    ...postcodeErrorResponses({ resolver: RESOLVER_FAILED }),
  },
});

/** `GET /v1/postcode?postcode=`: the postcode resolver on its own. */
export function registerPostcode(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "now">, places: PlaceLookup): void {
  openapiRoute(app, route, async (c) => {
    const found = await places.find(c.req.valid("query").postcode);
    if (!found.ok) throw placeFailureError(found.error);
    c.header("Cache-Control", PLACE_CACHE_CONTROL);
    return c.json({ ...placeView(found.value), sources: [postcodesIoSource(deps.now().getUTCFullYear())] }, 200);
  });
}
