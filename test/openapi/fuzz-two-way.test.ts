import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { propertyRuns } from "../helpers/env.js";
import { type FuzzRig, fuzzRig, hostileString, SEED, WEBHOOK_SECRET } from "../resilience/fuzz.js";

/**
 * The server held to the document both ways, by a fuzz whose arbitraries are read off
 * the served document: for every client operation, its query parameters, its header parameters and
 * its JSON body come from the document's schemas (patterns, enums, ranges, lengths, list sizes),
 * mixed with wild values. The document itself (Ajv over each parameter and the body) says whether a
 * request is allowed; an allowed request must not be refused with 400, a forbidden one must be.
 * Every status and header met must be declared for that status of that operation, and none is a
 * 500. The Stripe webhook (in the document's `webhooks`) is fuzzed the same way, its body signed
 * with the endpoint's secret in `Stripe-Signature` (a wrong signature is what the document forbids
 * there); `If-None-Match` is sent on the cached lookups, now a tag the server gave for that URL,
 * now any string.
 */

const RUNS = propertyRuns(500);
const PROTOCOL = new Set(["content-type", "content-length", "connection", "date", "vary", "transfer-encoding"]);

type Schema = Record<string, unknown>;
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema: Schema;
}
interface Operation {
  "x-dependent-required"?: Record<string, string[]>;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { headers?: Record<string, unknown> }>;
  security?: Record<string, unknown>[];
}
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

let rig: FuzzRig;
let doc: Doc;
let ajv: Ajv2020;
beforeAll(async () => {
  rig = await fuzzRig();
  doc = (await (await rig.t.app.request("/v1/openapi.json")).json()) as Doc;
  ajv = new Ajv2020({ strict: false, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc as object, "openapi");
});
afterAll(() => rig.close());

const resolve = (schema: Schema): Schema =>
  typeof schema.$ref === "string"
    ? resolve(doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {})
    : schema;

const typesOf = (schema: Schema): string[] =>
  Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];

/** Values the schema allows, as far as an arbitrary can aim (Ajv has the last word). */
function allowed(raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((s) => allowed(s, depth + 1)));
  const arbitraries = typesOf(schema).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return fc.integer({
          min: Math.max(Number(schema.minimum ?? -1e6), Number.MIN_SAFE_INTEGER),
          max: Math.min(Number(schema.maximum ?? 1e6), Number.MAX_SAFE_INTEGER),
        });
      case "number":
        return fc.oneof(
          fc.double({
            min: Number(schema.minimum ?? -1e6),
            max: Number(schema.maximum ?? 1e6),
            noNaN: true,
            noDefaultInfinity: true,
          }),
          fc.integer({
            min: Math.ceil(Number(schema.minimum ?? -1e6)),
            max: Math.floor(Number(schema.maximum ?? 1e6)),
          }),
        );
      case "array":
        return fc.array(allowed((schema.items as Schema) ?? {}, depth + 1), {
          minLength: Number(schema.minItems ?? 0),
          maxLength: Math.min(Number(schema.maxItems ?? 4), 6),
        });
      case "object": {
        const props = (schema.properties ?? {}) as Record<string, Schema>;
        return fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, allowed(s, depth + 1)])), {
          requiredKeys: (schema.required as string[] | undefined) ?? [],
        });
      }
      default:
        return allowedString(schema);
    }
  });
  if (schema.example !== undefined) arbitraries.push(fc.constant(schema.example));
  return arbitraries.length > 0 ? fc.oneof(...arbitraries) : fc.jsonValue({ maxDepth: 2 });
}

function allowedString(schema: Schema): fc.Arbitrary<string> {
  const min = Number(schema.minLength ?? 0);
  const max = Math.min(Number(schema.maxLength ?? 60), 300);
  if (schema.format === "date")
    return fc
      .date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("2999-12-31T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  const base =
    typeof schema.pattern === "string"
      ? fc.stringMatching(new RegExp(schema.pattern as string), { maxLength: max })
      : fc.string({ minLength: min, maxLength: max });
  return base.filter((s) => s.length >= min && s.length <= Number(schema.maxLength ?? Number.POSITIVE_INFINITY));
}

/** What the document allows, mixed with what a careless or hostile client sends. */
const value = (schema: Schema): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: allowed(schema) },
    { weight: 1, arbitrary: hostileString(String(schema.example ?? "")) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.string({ maxLength: 8 })) },
  );

/** A query value as the document reads it: JSON's number grammar is a number, anything else a string. */
const queryValue = (s: string): unknown => (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(s) ? Number(s) : s);
// Node 20 has String#toWellFormed; the ES2023 lib does not declare it. A URL carries no lone surrogate.
const wellFormed = (s: string) => (s as string & { toWellFormed(): string }).toWellFormed();
const asQueryStrings = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).map((x) => wellFormed(String(x)));
/** Header values a fetch Request can carry. */
const headerSafe = (s: string) => /^[\x20-\x7e]*$/.test(s) && s.trim() === s;

interface Case {
  query: [string, string[]][];
  headers: Record<string, string>;
  body?: string;
  /** Stripe-Signature: made with the endpoint's secret over the body sent. */
  signed?: boolean;
  /** If-None-Match: the ETag the server gives this URL. */
  ownTag?: boolean;
}

/** Parameters whose value the fuzz makes at request time (see `Case`). */
const SIGNATURE = "stripe-signature";
const IF_NONE_MATCH = "if-none-match";
const special = (p: Parameter) => [SIGNATURE, IF_NONE_MATCH].includes(p.name.toLowerCase());

function requestOf(op: Operation): fc.Arbitrary<Case> {
  const params = op.parameters ?? [];
  const entries = params
    .filter((p) => p.in === "query" || (p.in === "header" && !special(p)))
    .map((p) =>
      fc.option(
        value(p.schema).map((v) => [p, asQueryStrings(v)] as const),
        { nil: undefined, freq: p.required ? 20 : 3 },
      ),
    );
  const schema = op.requestBody?.content["application/json"]?.schema;
  const body = schema
    ? fc.oneof(
        { weight: 4, arbitrary: allowed(schema).map((b) => JSON.stringify(b)) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((b) => JSON.stringify(b)) },
        { weight: 1, arbitrary: allowed(schema).chain((b) => mutateJson(b)) },
      )
    : fc.constant(undefined);
  const signs = params.some((p) => p.name.toLowerCase() === SIGNATURE);
  const tags = params.some((p) => p.name.toLowerCase() === IF_NONE_MATCH);
  // Signed (mostly), or a wild Stripe-Signature; a tag of this URL, any string, or none.
  const signature = signs
    ? fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: hostileString("t=1,v1=00").filter((s) => s.length <= 1000) },
      )
    : fc.constant(null);
  const tag = tags
    ? fc.oneof(
        { weight: 2, arbitrary: fc.constant(null) },
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom("*", '"0"', 'W/"x", "y"', "") },
        { weight: 1, arbitrary: hostileString('"abc"').filter((s) => s.length <= 1000) },
      )
    : fc.constant(null);
  return fc.tuple(fc.tuple(...entries), body, signature, tag).map(([chosen, b, sig, inm]) => {
    const query: [string, string[]][] = [];
    const headers: Record<string, string> = {};
    for (const entry of chosen) {
      if (!entry) continue;
      const [p, values] = entry;
      if (p.in === "query") query.push([p.name, values]);
      else if (values[0] !== undefined && headerSafe(values[0])) headers[p.name] = values[0];
    }
    // undefined: made at request time (signed, or the URL's own tag); null: not sent.
    if (typeof sig === "string" && headerSafe(sig)) headers["Stripe-Signature"] = sig;
    if (typeof inm === "string" && headerSafe(inm)) headers["If-None-Match"] = inm;
    return { query, headers, body: b, signed: signs && sig === undefined, ownTag: tags && inm === undefined };
  });
}

/** One property of an allowed body replaced by a wild value, or removed. */
function mutateJson(b: unknown): fc.Arbitrary<string> {
  if (typeof b !== "object" || b === null) return fc.constant(JSON.stringify(b));
  const keys = Object.keys(b);
  if (keys.length === 0) return fc.constant(JSON.stringify(b));
  return fc
    .tuple(fc.constantFrom(...keys), fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }))
    .map(([k, v]) => JSON.stringify(Array.isArray(b) ? b.map((x, i) => (String(i) === k ? v : x)) : { ...b, [k]: v }));
}

/** Ajv over a schema of the document (a `$ref` is resolved in the document). */
const valid = (schema: Schema, v: unknown) =>
  ajv.validate(typeof schema.$ref === "string" ? { $ref: `openapi${schema.$ref}` } : schema, v);

/** What the document says of this request: null when allowed, else why not. */
function documentRefusal(op: Operation, c: Case): string | null {
  for (const p of op.parameters ?? []) {
    if (p.name.toLowerCase() === SIGNATURE && !c.signed) return "Stripe-Signature not made with the endpoint's secret";
    if (p.in === "header" && special(p) && c.headers[p.name] === undefined) continue;
    const sent =
      p.in === "query"
        ? c.query.find(([n]) => n === p.name)?.[1]
        : c.headers[p.name] === undefined
          ? undefined
          : [c.headers[p.name] as string];
    if (sent === undefined) {
      if (p.required) return `${p.name} missing`;
      continue;
    }
    const schema = resolve(p.schema);
    const types = typesOf(schema);
    // A list is its strings; a string parameter is a string whatever its digits; else JSON's reading.
    // A list that may also be one string (`anyOf` array or string): one value sent is either.
    const eitherList = ((schema.anyOf ?? []) as Schema[]).some((s) => typesOf(resolve(s)).includes("array"));
    const v =
      types.includes("array") || (eitherList && sent.length > 1)
        ? sent
        : p.in === "header" || types.includes("string") || eitherList
          ? sent[0]
          : queryValue(sent[0] as string);
    if (!valid(p.schema, v) && !(eitherList && valid(p.schema, sent)))
      return `${p.name}=${JSON.stringify(sent)}: ${ajv.errorsText()}`;
  }
  for (const [name, needs] of Object.entries(op["x-dependent-required"] ?? {})) {
    const sent = (n: string) => c.query.some(([q]) => q === n);
    if (sent(name)) for (const other of needs) if (!sent(other)) return `${name} without ${other}`;
  }
  const schema = op.requestBody?.content["application/json"]?.schema;
  if (schema) {
    if (c.body === undefined) return op.requestBody?.required ? "body missing" : null;
    if (!valid(schema, JSON.parse(c.body))) return `body: ${ajv.errorsText()}`;
  }
  return null;
}

const OPERATIONS = ["/v1/moon", "/v1/sun", "/v1/holidays", "/v1/holidays/working-days", "/v1/vat", "/v1/postcode"]
  .map((p) => [p, "get"])
  .concat([
    ["/v1/weather", "get"],
    ["/v1/usage", "get"],
    ["/v1/mail/contact", "post"],
    ["/v1/vibe/classify", "post"],
  ]);

const WEBHOOKS = [["/v1/billing/webhook", "post"]];

/** The request `c` as sent: its signature made over its body, its tag fetched for its URL. */
async function send(path: string, method: string, c: Case, keyed: boolean, peer: string): Promise<Response> {
  const qs = c.query.flatMap(([k, vs]) => vs.map((v) => `${k}=${encodeURIComponent(v)}`)).join("&");
  const url = `${path}${qs ? `?${qs}` : ""}`;
  const headers: Record<string, string> = { ...c.headers };
  if (keyed) headers.Authorization = `Bearer ${rig.key}`;
  if (c.body !== undefined) headers["Content-Type"] = "application/json";
  const env = { incoming: { socket: { remoteAddress: peer } } };
  if (c.signed) {
    const { default: Stripe } = await import("stripe");
    headers["Stripe-Signature"] = Stripe.webhooks.generateTestHeaderString({
      payload: c.body ?? "",
      secret: WEBHOOK_SECRET,
    });
  }
  if (c.ownTag) {
    const first = await rig.t.app.request(url, { method: method.toUpperCase(), headers }, env);
    await first.arrayBuffer();
    const tag = first.headers.get("etag");
    if (tag) headers["If-None-Match"] = tag;
  }
  return rig.t.app.request(url, { method: method.toUpperCase(), headers, body: c.body }, env);
}

describe(`the server and the document agree both ways (${RUNS} generated requests per operation, seed ${SEED})`, () => {
  it("covers every client operation of the document", () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path}`),
    );
    expect(documented.sort()).toEqual(OPERATIONS.map(([p, m]) => `${m} ${p}`).sort());
  });

  it.each([...OPERATIONS, ...WEBHOOKS])("%s (%s)", async (path, method) => {
    const op = (doc.paths[path]?.[method as string] ?? doc.webhooks[path]?.[method as string]) as Operation;
    const keyed = (op.security ?? []).length > 0 && !(op.security ?? []).some((s) => Object.keys(s).length === 0);
    const refusedAllowed = new Map<string, string>();
    const acceptedForbidden = new Map<string, string>();
    const undeclared = new Set<string>();
    const internal = new Map<string, string>();
    const statuses = new Map<number, number>();
    let allowedCount = 0;
    let forbiddenCount = 0;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(requestOf(op), async (c) => {
        const qs = c.query.flatMap(([k, vs]) => vs.map((v) => `${k}=${encodeURIComponent(v)}`)).join("&");
        // Each request from its own address: no limit is what answers.
        const res = await send(path as string, method as string, c, keyed, `10.9.${(n >> 8) & 255}.${n++ & 255}`);
        const text = await res.text();
        const why = documentRefusal(op, c);
        const label = `${qs}${c.body ? ` body=${c.body.slice(0, 120)}` : ""}${Object.keys(c.headers).length ? ` headers=${JSON.stringify(c.headers)}` : ""}`;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 500) internal.set(label, text.slice(0, 200));
        if (why === null) {
          allowedCount++;
          if (res.status === 400) refusedAllowed.set(label, text.slice(0, 200));
        } else {
          forbiddenCount++;
          if (res.status !== 400) acceptedForbidden.set(label, `${res.status}; document: ${why}`);
        }
        const declared = op.responses[String(res.status)];
        if (!declared) undeclared.add(`status ${res.status}`);
        else {
          const names = new Set(Object.keys(declared.headers ?? {}).map((h) => h.toLowerCase()));
          for (const name of res.headers.keys())
            if (!PROTOCOL.has(name) && !names.has(name)) undeclared.add(`${res.status}: header ${name}`);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(
      `${method?.toUpperCase()} ${path}: ${RUNS} cases, ${allowedCount} allowed by the document (${refusedAllowed.size} refused with 400), ${forbiddenCount} forbidden (${acceptedForbidden.size} not refused with 400); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    const sample = (m: Map<string, string>) => [...m].slice(0, 8).map(([k, v]) => `${k} → ${v}`);
    expect({ refusedAllowed: sample(refusedAllowed), acceptedForbidden: sample(acceptedForbidden) }).toEqual({
      refusedAllowed: [],
      acceptedForbidden: [],
    });
    expect([...undeclared].sort()).toEqual([]);
    expect(sample(internal)).toEqual([]);
    // Both sides of the contract are exercised wherever the operation takes input.
    if ((op.parameters ?? []).length > 0 || op.requestBody) {
      expect(allowedCount).toBeGreaterThan(RUNS / 10);
      expect(forbiddenCount).toBeGreaterThan(RUNS / 20);
    }
  });
});
