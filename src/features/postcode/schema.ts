import { z } from "@hono/zod-openapi";
import type { Place } from "../../ports/postcode-resolver.js";
import { errorResponse } from "../shared/responses.js";

/** Longest `postcode` value taken as a (possibly wrong) postcode rather than a malformed parameter. */
const POSTCODE_PARAM_MAX = 100;

export const PostcodeQuery = z.object({
  postcode: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .regex(/\S/, "must not be empty")
    // The spec answers an invalid postcode with 404 `not_found`, so the bound that makes a value
    // a bad parameter (400) sits far above any postcode a person could mistype.
    .max(POSTCODE_PARAM_MAX, `must be at most ${POSTCODE_PARAM_MAX} characters`)
    .openapi({
      param: { name: "postcode", in: "query" },
      example: "SW1A 2AA",
      description: `A UK postcode in any case and spacing (\`sw1a2aa\`, \`SW1A 2AA\`). Any value up to ${POSTCODE_PARAM_MAX} characters that is not a postcode answers 404 \`not_found\`; a longer one, 400.`,
    }),
});

export const SourceSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    licence: z.string(),
    licence_url: z.string(),
    attribution: z.string().openapi({ description: "Statement the data licence requires you to show." }),
  })
  .openapi("DataSource");

const nullableText = z.string().nullable();
const nullableNumber = z.number().nullable();

export const PlaceSchema = z
  .object({
    postcode: z.string().openapi({ example: "SW1A 2AA" }),
    outcode: z.string().openapi({ example: "SW1A" }),
    incode: z.string().openapi({ example: "2AA" }),
    lat: nullableNumber.openapi({ example: 51.50354, description: "WGS84; null when the postcode has none." }),
    lon: nullableNumber.openapi({ example: -0.127695 }),
    latitude: nullableNumber.openapi({ example: 51.50354, deprecated: true, description: "Old name of `lat`." }),
    longitude: nullableNumber.openapi({ example: -0.127695, deprecated: true, description: "Old name of `lon`." }),
    eastings: nullableNumber.openapi({ example: 530047, description: "OS National Grid, metres." }),
    northings: nullableNumber.openapi({ example: 179951 }),
    district: nullableText.openapi({ example: "Westminster", description: "Local authority district." }),
    county: nullableText.openapi({ example: null }),
    ward: nullableText.openapi({ example: "St James's" }),
    parish: nullableText.openapi({ example: "Westminster, unparished area" }),
    constituency: nullableText.openapi({ example: "Cities of London and Westminster" }),
    region: nullableText.openapi({ example: "London", description: "English region; null outside England." }),
    country: nullableText.openapi({ example: "England" }),
  })
  .openapi("Place");

export const PostcodeResponse = PlaceSchema.extend({ sources: z.array(SourceSchema) }).openapi("PostcodeLookup");

export type PlaceView = z.infer<typeof PlaceSchema>;

export function placeView(p: Place): PlaceView {
  return {
    postcode: p.postcode,
    outcode: p.outcode,
    incode: p.incode,
    lat: p.latitude,
    lon: p.longitude,
    latitude: p.latitude,
    longitude: p.longitude,
    eastings: p.eastings,
    northings: p.northings,
    district: p.admin_district,
    county: p.admin_county,
    ward: p.admin_ward,
    parish: p.parish,
    constituency: p.parliamentary_constituency,
    region: p.region,
    country: p.country,
  };
}

/** The error responses every postcode-driven route shares; `upstream` names the 502 cases. */
export const postcodeErrorResponses = (
  upstream: Record<string, string>,
  extra404: Record<string, { code: string; message: string; reason: string }> = {},
) => ({
  400: errorResponse("`postcode` missing or empty.", {
    missing: { code: "invalid_body", message: 'query parameter "postcode" is required' },
  }),
  404: errorResponse("Postcode not found; `reason` tells malformed, unknown and terminated apart.", {
    ...extra404,
    invalid_format: { code: "not_found", message: "postcode not found", reason: "invalid_format" },
    unknown: { code: "not_found", message: "postcode not found", reason: "unknown" },
    terminated: {
      code: "not_found",
      message: "postcode not found",
      reason: "terminated",
      details: { postcode: "E1W 1UU", year_terminated: 2007, month_terminated: 12 },
    },
  }),
  502: errorResponse(
    "An upstream provider failed, timed out, redirected or answered nonsense.",
    Object.fromEntries(Object.entries(upstream).map(([name, message]) => [name, { code: "upstream_error", message }])),
  ),
});

export const RESOLVER_FAILED = "The postcode resolver failed; try again shortly.";
export const FORECAST_FAILED = "The weather provider failed; try again shortly.";
