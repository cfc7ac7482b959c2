import { CORS_HEADERS } from "../../http/cors.js";
import { CACHED_LOOKUPS } from "../../http/http-cache.js";
import { QUERY_ALIASES } from "../../http/query-aliases.js";
import { demoTierErrorResponses, demoTierHeaders, HEADERS_MAX } from "../shared/responses.js";

/**
 * Post-processing of the generated OpenAPI document so it declares what the server really does
 * for every operation, without repeating it in each route: an `operationId`, `X-Request-Id` on
 * every response, `Retry-After` on every 429, who may call (security), the 405 / 413 / 500 any
 * route can give, and the HTTP caching of the deterministic lookups.
 */

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId?: string;
  tags?: string[];
  security?: Json[];
  parameters?: Json[];
  responses: Record<string, Json & { headers?: Record<string, Json>; content?: Json }>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const TAGS = [
  { name: "Lookups", description: "Public GETs on the demo tier: moon, sun, holidays, VAT, postcodes, weather." },
  { name: "Vibe", description: "Paid sentiment classification; an API key on every call." },
  { name: "Keys", description: "What a key may still do: its plan, limits and recent use." },
  { name: "Contact desk", description: "Messages to the people behind Almanac, sent through the mail lane." },
  { name: "Billing", description: "Purchases that change an account's plan (Stripe Checkout webhook)." },
];
const ERROR = { $ref: "#/components/schemas/ErrorResponse" };

const DATE_ONLY = new Set(["/v1/holidays/working-days", "/v1/vat"]);

/**
 * Every parameter states how it is serialised, OpenAPI's defaults made explicit so no generator
 * guesses: query parameters `form` + `explode: true` (a list is sent repeated, `types=a&types=b`,
 * which the server accepts as it accepts `types=a,b`), headers `simple`.
 */
function withStyle(p: Json): Json {
  if (p.style !== undefined) return p;
  return p.in === "query" ? { ...p, style: "form", explode: true } : { ...p, style: "simple", explode: false };
}

/** "… Also accepted as `latitude`." on each query parameter that has aliases. */
function withAliases(p: Json): Json {
  if (p.in !== "query") return p;
  const aliases = Object.keys(QUERY_ALIASES).filter((a) => QUERY_ALIASES[a] === p.name);
  if (aliases.length === 0) return p;
  const description = `${(p.description as string | undefined) ?? ""} Also accepted as ${aliases.map((a) => `\`${a}\``).join(" or ")}.`;
  return { ...p, description: description.trim() };
}

function typedParameter(path: string, p: Json): Json {
  if (p.in === "header" && String(p.name).toLowerCase() === "idempotency-key") {
    const schema = p.schema as Json;
    return { ...p, schema: { ...schema, type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" } };
  }
  if (p.in !== "query") return p;
  const schema = p.schema as Json & { example?: unknown };
  const name = String(p.name);
  if (name === "date" && DATE_ONLY.has(path)) {
    // `format: date` says a real calendar day; a pattern beside it, the years the server serves.
    const { pattern, ...rest } = schema;
    const years = pattern === "^\\d{4}-\\d{2}-\\d{2}$" ? {} : { pattern };
    return { ...p, schema: { ...rest, ...years, format: "date" } };
  }
  return p;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Times and dates in answers carry `format: date-time` / `date`, read off each string
 * property's documented example (every such field has one); the contract test then checks real
 * answers against the format too.
 */
function addTimeFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) addTimeFormats(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const schema = node as Json & { type?: unknown; example?: unknown; format?: unknown };
  const isString = schema.type === "string" || (Array.isArray(schema.type) && schema.type.includes("string"));
  if (isString && schema.format === undefined && typeof schema.example === "string") {
    if (DATE_TIME.test(schema.example)) schema.format = "date-time";
    else if (DATE.test(schema.example)) schema.format = "date";
  }
  for (const value of Object.values(schema)) addTimeFormats(value);
}

const INT32 = 2 ** 31;

/**
 * Every integer states its size and range: a range left open is JavaScript's exact integers (the
 * largest a JSON answer of this server can carry), and the format is `int32` when the range fits
 * in 32 bits, else `int64`. Examples are data, not schemas, and are left alone.
 */
function addIntegerRanges(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) addIntegerRanges(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const schema = node as Json;
  const isInteger = schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"));
  if (isInteger) {
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) schema.minimum = Number.MIN_SAFE_INTEGER;
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) schema.maximum = Number.MAX_SAFE_INTEGER;
    const low = Number(schema.minimum ?? schema.exclusiveMinimum);
    const high = Number(schema.maximum ?? schema.exclusiveMaximum);
    schema.format ??= low >= -INT32 && high < INT32 ? "int32" : "int64";
  }
  for (const [key, value] of Object.entries(schema))
    if (key !== "example" && key !== "examples") addIntegerRanges(value);
}

const CACHED_PATHS = new Set(CACHED_LOOKUPS.map((l) => l.path));
/** Operations no key applies to. */
const UNAUTHENTICATED = new Set(["/v1/billing/webhook", "/v1/mail/contact"]);

/** `access-control-allow-origin` → `Access-Control-Allow-Origin`. */
const titleCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/** `get` + `/v1/holidays/working-days` → `getHolidaysWorkingDays`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((s) => s && s !== "v1" && !s.startsWith("{"))
    .flatMap((s) => s.split(/[-_.]/));
  return method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

const errorResponse = (description: string, headers: Record<string, Json> = {}) => ({
  description,
  headers,
  content: { "application/json": { schema: ERROR } },
});

/** A response built with shared/responses.ts's errorResponse(), as document JSON. */
const asJson = (response: { content: { "application/json": object } }): Json => ({
  ...response,
  content: { "application/json": { ...response.content["application/json"], schema: ERROR } },
});

/** The paths the demo tier (http/demo-tier.ts, as app.ts mounts it) does not count. */
const DEMO_EXEMPT = new Set(["/v1/openapi.json", "/v1/usage"]);

/**
 * What the demo tier adds to every public GET it stands in front of: a rejected key's 401, its own
 * 429, and its RateLimit headers on whatever passes through it.
 */
function demoTierLayer(op: Operation): void {
  op.responses["401"] ??= asJson(demoTierErrorResponses[401]);
  op.responses["429"] ??= asJson(demoTierErrorResponses[429]);
  for (const [status, response] of Object.entries(op.responses)) {
    if (status !== "401") response.headers = { ...demoTierHeaders, ...response.headers };
  }
}

/** The limits the document's examples quote, as configured (not the defaults they were written with). */
export interface ContractLimits {
  demoHourlyLimit: number;
}

/** The demo-tier figures in descriptions and examples, restated with the configured limit. */
function withLimits<T>(doc: T, limits: ContractLimits): T {
  const n = String(limits.demoHourlyLimit);
  const text = JSON.stringify(doc)
    .replaceAll(";q=60;w=3600", `;q=${n};w=3600`)
    .replaceAll("(60 calls per 3600 s", `(${n} calls per 3600 s`)
    .replaceAll("Demo tier limit of 60 calls per hour", `Demo tier limit of ${n} calls per hour`)
    .replaceAll("Demo-tier limit reached (60 calls per hour", `Demo-tier limit reached (${n} calls per hour`);
  return JSON.parse(text) as T;
}

/** Declares an optional request header on `op`, unless the route already declares it. */
function addHeaderParameter(op: Operation, name: string, description: string, schema: Json): void {
  const params = op.parameters ?? [];
  if (params.some((p) => p.in === "header" && p.name === name)) return;
  op.parameters = [...params, { in: "header", name, required: false, description, schema }];
}

export function contractDocument<T extends object>(doc: T, limits?: ContractLimits): T {
  const out = structuredClone(doc) as T & {
    paths: Record<string, Record<string, Operation>>;
    components?: Json;
  };
  out.components ??= {};
  const components = out.components as { headers?: Record<string, Json> };
  components.headers = {
    ...components.headers,
    "X-Request-Id": {
      description: "Generated per request (never taken from the client); errors repeat it as `error.request_id`.",
      schema: { type: "string", format: "uuid", maxLength: 36 },
    },
    "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } },
    ETag: {
      description: "Strong validator of the body (SHA-1).",
      schema: { type: "string", maxLength: 42, pattern: '^"[0-9a-f]{40}"$' },
    },
    "Cache-Control": {
      description: "`public, max-age=N` when the query pins the answer (date/year), else `no-cache`.",
      schema: { type: "string", maxLength: 64 },
    },
    Allow: { description: "The methods the path serves.", schema: { type: "string", maxLength: 64 } },
    "WWW-Authenticate": {
      description:
        'RFC 6750: `Bearer` when no usable key was sent, `Bearer error="invalid_token"` when the key was rejected.',
      schema: { type: "string", maxLength: 128, pattern: "^Bearer" },
    },
    // The CORS headers as http/cors.ts sends them on every /v1 answer.
    ...Object.fromEntries(
      CORS_HEADERS.map(([name, value]) => [
        titleCase(name),
        {
          description: "CORS: any web page may read the answer (no credentials are involved).",
          schema: { type: "string", const: value },
        },
      ]),
    ),
  };
  components.headers["X-Request-Id"] = { ...components.headers["X-Request-Id"], required: true };
  // Integers in headers: the size the server really sends.
  const retry = components.headers["Retry-After"] as { schema: Json };
  retry.schema = { type: "integer", format: "int32", minimum: 1, maximum: 86_400 };

  // Webhooks (keyed by the path they are sent to) answer through the same middleware as paths.
  const webhooks = (out as unknown as { webhooks?: Record<string, Record<string, Operation>> }).webhooks ?? {};
  const tags = TAGS.filter((t) =>
    [...Object.values(out.paths), ...Object.values(webhooks)].some((item) =>
      Object.values(item).some((op) => (op.tags as string[] | undefined)?.includes(t.name)),
    ),
  );
  (out as unknown as { tags: typeof TAGS }).tags = tags;
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

  addTimeFormats((out.components as Json).schemas);
  for (const item of Object.values(out.paths)) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) addTimeFormats(response.content);
    }
  }

  for (const [path, item] of [...Object.entries(out.paths), ...Object.entries(webhooks)]) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId ??= operationIdOf(method, path);
      if (op.parameters) op.parameters = op.parameters.map((p) => withAliases(typedParameter(path, p)));
      // Authentication is modelled once, by the security schemes (never an `Authorization` header
      // parameter, which OpenAPI ignores). Public lookups: anonymous (demo tier) or a key. The
      // contact desk takes no key (one sent is not looked at). The webhook is authenticated by its
      // Stripe signature, not a scheme OpenAPI can express.
      if (!op.security) op.security = UNAUTHENTICATED.has(path) ? [] : [{}, { bearer: [] }];
      op.responses["405"] ??= errorResponse("The path exists but not for this method.", { Allow: ref("Allow") });
      op.responses["500"] ??= errorResponse("Internal error: the message is generic, the request id names it.");
      // Any status a proxy or a future version adds still has the one error shape.
      op.responses.default ??= errorResponse("Any other error, in the same shape.");
      if (method === "post") op.responses["413"] ??= errorResponse("The request body is larger than the limit.");
      if (CACHED_PATHS.has(path)) {
        addHeaderParameter(op, "If-None-Match", "An ETag from an earlier answer: 304 when the answer is the same.", {
          type: "string",
          maxLength: HEADERS_MAX,
        });
        op.responses["304"] ??= {
          description: "Not modified: the ETag matched; no body.",
          headers: { ETag: ref("ETag"), "Cache-Control": ref("Cache-Control") },
        };
        const ok = op.responses["200"];
        if (ok) ok.headers = { ...ok.headers, ETag: ref("ETag"), "Cache-Control": ref("Cache-Control") };
      }
      if (method === "get" && path.startsWith("/v1/") && !DEMO_EXEMPT.has(path)) demoTierLayer(op);
      if (op.parameters) op.parameters = op.parameters.map(withStyle);
      for (const [status, response] of Object.entries(op.responses)) {
        response.headers = { ...response.headers, "X-Request-Id": ref("X-Request-Id") };
        if (path.startsWith("/v1/"))
          for (const [name] of CORS_HEADERS) response.headers[titleCase(name)] = ref(titleCase(name));
        if ((status === "429" || status === "503") && !response.headers["Retry-After"])
          response.headers["Retry-After"] = ref("Retry-After");
        if (status === "401") response.headers["WWW-Authenticate"] = ref("WWW-Authenticate");
      }
    }
  }
  addIntegerRanges(out.components);
  addIntegerRanges(out.paths);
  addIntegerRanges(webhooks);
  return limits ? withLimits(out, limits) : out;
}
