import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../../app-deps.js";
import { reuseUntil } from "../../http/answer-cache.js";
import { ApiError } from "../../http/errors.js";
import { keptAnswers, keptJson, taggedText } from "../../http/http-cache.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute } from "../../http/validation.js";
import type { VatRegistry } from "../../ports/vat-registry.js";
import { LocalToday } from "../shared/geo-time.js";
import { loadVatDataset } from "./dataset.js";
import { VAT_EXAMPLE, vatErrorResponses } from "./examples.js";
import { countryTimeZone, ratesOn } from "./lookup.js";
import { VatQuery, VatResponse, type VatResponseBody } from "./schema.js";
import { checkVatNumber, parseCode } from "./vat-number.js";

type VatNumberBody = NonNullable<VatResponseBody["vat_number"]>;
type RegistrationBody = VatNumberBody["registration"];

const route = createRoute({
  method: "get",
  path: "/v1/vat",
  tags: ["Lookups"],
  summary: "VAT rates of a country on a date, and an offline (optionally VIES) check of a VAT number",
  description:
    "Rates from Almanac's own effective-dated dataset (EU-27, GB, XI, NO, CH, IS, LI, MC, IM; from 2019 at least), " +
    "each period with its official source, plus history, known upcoming changes and territorial exceptions. " +
    "Period boundaries are calendar dates in the country's civil time. A `code` shaped like a VAT number also gets " +
    "a jsvat format and checksum verdict and, when a VIES endpoint is configured, a registration status " +
    "(`unknown` when the registry cannot answer, never `invalid`).",
  request: { query: VatQuery },
  responses: {
    200: {
      description: "Rates in force on the date.",
      content: { "application/json": { schema: VatResponse, example: VAT_EXAMPLE } },
    },
    ...vatErrorResponses,
  },
});

const SKIPPED: Omit<RegistrationBody, "reason"> = {
  status: "unknown",
  checked: false,
  registry: null,
  name: null,
  address: null,
  checked_at: null,
  cached: false,
};

async function registration(
  registry: VatRegistry | undefined,
  country: string,
  verdict: ReturnType<typeof checkVatNumber>,
): Promise<RegistrationBody> {
  if (!registry) return { ...SKIPPED, reason: "not_configured" };
  const memberState = country === "GR" ? "EL" : country;
  if (!registry.covers(memberState)) return { ...SKIPPED, registry: registry.name, reason: "not_covered" };
  if (verdict.verdict !== "valid") return { ...SKIPPED, registry: registry.name, reason: "failed_offline_check" };
  const result = await registry.check(memberState, verdict.normalized.slice(2));
  return {
    status: result.status,
    checked: true,
    registry: registry.name,
    ...(result.reason !== undefined && { reason: result.reason }),
    name: result.name,
    address: result.address,
    checked_at: result.checked_at,
    cached: result.cached ?? false,
  };
}

export function registerVat(app: OpenAPIHono<AppEnv>, deps: Pick<AppDeps, "config" | "now" | "vatRegistry">): void {
  const data = loadVatDataset();
  const today = new LocalToday();
  const answers = keptAnswers(deps.config);

  openapiRoute(app, route, async (c) => {
    const query = c.req.valid("query");
    const parsed = parseCode(query.code);
    const zone = countryTimeZone(data, parsed.country);
    if (!zone) {
      const what = parsed.kind === "country" ? "country code" : "VAT number country prefix";
      throw new ApiError("not_found", `Unknown ${what} "${parsed.country}": no VAT rates on record for it.`, {
        reason: "unknown_country",
      });
    }
    const date = query.date ?? today.get(zone, deps.now());
    const found = ratesOn(data, parsed.country, date);
    if (!found.ok) {
      const message =
        found.reason === "before_coverage"
          ? `No VAT rates on record for ${parsed.country} on ${date}: the data starts on ${found.first}.`
          : `Unknown country code "${parsed.country}".`;
      throw new ApiError("not_found", message, { reason: found.reason });
    }
    const body: VatResponseBody = { query: { code: query.code, date: query.date ?? null }, ...found.answer };
    if (parsed.kind === "vat_number") {
      const verdict = checkVatNumber(parsed.country, parsed.normalized);
      body.vat_number = { ...verdict, registration: await registration(deps.vatRegistry, parsed.country, verdict) };
      return c.json(body, 200);
    }
    // c.json's bytes and their ETag, made once per query as sent and the date it resolved to (the
    // body echoes the query: {"query":…,<the (country, date) answer's keys>}); every time with the
    // answer cache off.
    const key = `${query.code}\n${query.date ?? ""}\n${date}`;
    let kept = answers?.get(key);
    if (kept === undefined) {
      const json = `{"query":${JSON.stringify(body.query)},${JSON.stringify(found.answer).slice(1)}`;
      kept = taggedText(json);
      answers?.set(key, kept);
    }
    // Today's rates hold until the country's next midnight (an explicit date: see http-cache.ts).
    if (query.date === undefined) reuseUntil(c, today.nextMidnight(zone, deps.now()));
    return keptJson<VatResponseBody>(c, kept);
  });
}
