import {
  type AnswerDoc,
  type Contract,
  contractsOf,
  type HeaderDoc,
  type Json,
  type OperationFacts,
} from "../../http/contract.js";
import { pattern } from "../../http/method-not-allowed.js";
import { QUERY_ALIASES } from "../../http/query-aliases.js";

/**
 * Post-processing of the generated OpenAPI document so it declares what the server really does
 * for every operation, without repeating it in each route: an `operationId`, and what everything
 * on the operation's path adds to it (`compose`: statuses, headers, parameters, who may call),
 * read from the middleware that does it (http/contract.ts).
 */

type Response = Json & { description: string; headers?: Record<string, Json>; content?: Record<string, Json> };
interface Operation extends Json {
  operationId?: string;
  tags?: string[];
  security?: Json[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, Response>;
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

const TAGS = [
  { name: "Lookups", description: "Public GETs on the demo tier: moon, sun, holidays, VAT, postcodes, weather." },
  { name: "Vibe", description: "Paid sentiment classification; an API key on every call." },
  { name: "Keys", description: "What a key may still do: its plan, limits and recent use." },
  { name: "Contact desk", description: "Messages to the people behind Almanac, sent through the mail lane." },
  { name: "Billing", description: "Purchases that change an account's plan (Stripe Checkout webhook)." },
];

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

/** `get` + `/v1/holidays/working-days` → `getHolidaysWorkingDays`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((s) => s && s !== "v1" && !s.startsWith("{"))
    .flatMap((s) => s.split(/[-_.]/));
  return method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

/** Where the document reads what the request path adds to each operation (see http/contract.ts). */
export interface ContractSources {
  /** The app's chain as Hono matches it (`app.routes`: registration order, outermost first). */
  chain: readonly { method: string; path: string; handler: unknown }[];
  /** What answers inside the chain for any route: the validation hook, the 405 of notFound. */
  inner: readonly Contract[];
  /** The one error renderer: its fallbacks inside the chain, its stamps on every error it renders. */
  renderer: Contract;
  /** Wrappers of the listener, outside the app (the drain). */
  edge: readonly Contract[];
}

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** Writes contracts' pieces into one operation, resolving shared headers to `components.headers`. */
class Composer {
  constructor(private readonly headerComponents: Record<string, Json>) {}

  header(name: string, doc: HeaderDoc | Json): Json {
    const { component, ...plain } = doc as HeaderDoc;
    if (!component) return plain;
    this.headerComponents[name] ??= plain;
    return { $ref: `#/components/headers/${name}` };
  }

  headers(docs: Record<string, HeaderDoc | Json> = {}): Record<string, Json> {
    return Object.fromEntries(Object.entries(docs).map(([name, doc]) => [name, this.header(name, doc)]));
  }

  /** Adds `answer` as `status`; where the status is declared already, joins the two (the declared one first). */
  answer(op: Operation, status: string, answer: AnswerDoc): void {
    const have = op.responses[status];
    const fresh = { ...structuredClone(answer), headers: this.headers(answer.headers) } as Response;
    if (!have) {
      op.responses[status] = fresh;
      return;
    }
    have.headers = { ...have.headers };
    for (const [name, doc] of Object.entries(fresh.headers ?? {})) have.headers[name] ??= doc;
    const said = (text: string) => text.toLowerCase().replace(/\.$/, "");
    if (!said(have.description).includes(said(answer.description)))
      have.description = `${have.description} Also: ${answer.description}`;
    const mine = have.content?.["application/json"] as Json | undefined;
    const theirs = fresh.content?.["application/json"] as Json | undefined;
    if (!theirs) return;
    if (!mine) have.content = fresh.content;
    else if (theirs.examples && mine.example === undefined) {
      const declared = (mine.examples as Json | undefined) ?? {};
      const added = Object.entries(theirs.examples as Json).filter(([name]) => !(name in declared));
      mine.examples = { ...declared, ...Object.fromEntries(added) };
    }
  }

  stamp(response: Response, headers: Record<string, HeaderDoc>): void {
    // A route may give two answers one headers object (contact's 200 and 502): stamp a copy.
    response.headers = { ...response.headers };
    for (const [name, doc] of Object.entries(headers)) response.headers[name] ??= this.header(name, doc);
  }
}

/**
 * An operation's responses are its route's own plus those of everything on its path: the chain's
 * middleware that applies to it (matched as Hono matches them), from the inside out, each adding
 * its headers to what passes through it and then its own answers; the error renderer's headers on
 * every error; then the listener's wrappers outside the app. The 405 is answered to the methods the
 * path does not serve, so it passes through what applies to those.
 */
function compose(
  op: Operation,
  method: string,
  path: string,
  served: string[],
  sources: ContractSources,
  out: Composer,
) {
  const concrete = path.replace(/\{[^}]+\}/g, "x");
  const facts: OperationFacts = {
    method: method.toUpperCase(),
    path,
    takesInput: (op.parameters?.length ?? 0) > 0 || op.requestBody !== undefined,
  };
  const others = HTTP_METHODS.filter((m) => !served.includes(m));
  const applies = (c: Contract, m: string) => c.applies?.({ ...facts, method: m }) ?? true;
  const layers = sources.chain
    .filter(
      (e) =>
        (e.method === "ALL" || e.method === facts.method || (facts.method === "HEAD" && e.method === "GET")) &&
        pattern(e.path).test(concrete),
    )
    // Outermost first, as the chain runs (a handler lists what it uses from the inside out).
    .flatMap((e) =>
      [...contractsOf(e.handler)].reverse().map((contract) => ({
        contract,
        forOp: applies(contract, facts.method),
        for405: e.method === "ALL" && others.some((m) => applies(contract, m)),
      })),
    );
  const inner = [...sources.inner, sources.renderer].map((contract) => ({
    contract,
    forOp: applies(contract, facts.method),
    for405: false,
  }));

  const addAnswers = (c: Contract) => {
    for (const [status, answer] of Object.entries(c.answers ?? {})) out.answer(op, status, answer);
    for (const [status, answer] of Object.entries(c.fallbacks ?? {}))
      if (!op.responses[status]) out.answer(op, status, answer);
  };
  for (const { contract, forOp } of inner) if (forOp) addAnswers(contract);
  for (const { contract, forOp } of layers) {
    if (!forOp) continue;
    for (const [status, answer] of Object.entries(contract.within ?? {})) out.answer(op, status, answer);
  }
  for (const { contract, forOp, for405 } of layers.reverse()) {
    for (const stamp of contract.stamps ?? []) {
      for (const [status, response] of Object.entries(op.responses)) {
        if ((status === "405" ? for405 : forOp) && (stamp.on?.(status) ?? true)) out.stamp(response, stamp.headers);
      }
    }
    if (!forOp) continue;
    addAnswers(contract);
    for (const p of contract.parameters ?? []) {
      const params = op.parameters ?? [];
      if (!params.some((q) => q.in === p.in && String(q.name).toLowerCase() === p.name.toLowerCase()))
        op.parameters = [...params, { ...p, required: p.required ?? false }];
    }
    op.security ??= contract.security;
  }
  for (const stamp of sources.renderer.stamps ?? [])
    for (const [status, response] of Object.entries(op.responses))
      if (response.content && (stamp.on?.(status) ?? true)) out.stamp(response, stamp.headers);
  for (const contract of sources.edge) if (applies(contract, facts.method)) addAnswers(contract);
  // Authentication is modelled once, by the security schemes (never an `Authorization` header
  // parameter, which OpenAPI ignores); nothing on the path asks for a key: anyone may call.
  op.security ??= [];
  op.responses = Object.fromEntries(
    Object.entries(op.responses).sort(([a], [b]) =>
      a === "default" ? 1 : b === "default" ? -1 : Number(a) - Number(b),
    ),
  );
}

export function contractDocument<T extends object>(doc: T, sources: ContractSources): T {
  const out = structuredClone(doc) as T & {
    paths: Record<string, Record<string, Operation>>;
    components?: Json;
  };
  out.components ??= {};
  const components = out.components as { headers?: Record<string, Json> };
  components.headers ??= {};
  const composer = new Composer(components.headers);

  // Webhooks (keyed by the path they are sent to) answer through the same middleware as paths.
  const webhooks = (out as unknown as { webhooks?: Record<string, Record<string, Operation>> }).webhooks ?? {};
  const tags = TAGS.filter((t) =>
    [...Object.values(out.paths), ...Object.values(webhooks)].some((item) =>
      Object.values(item).some((op) => (op.tags as string[] | undefined)?.includes(t.name)),
    ),
  );
  (out as unknown as { tags: typeof TAGS }).tags = tags;

  addTimeFormats((out.components as Json).schemas);
  for (const item of Object.values(out.paths)) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) addTimeFormats(response.content);
    }
  }

  for (const [path, item] of [...Object.entries(out.paths), ...Object.entries(webhooks)]) {
    const served = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
    if (served.includes("GET")) served.push("HEAD");
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId ??= operationIdOf(method, path);
      if (op.parameters) op.parameters = op.parameters.map(withAliases);
      compose(op, method, path, served, sources, composer);
      if (op.parameters) op.parameters = op.parameters.map(withStyle);
    }
  }
  addIntegerRanges(out.components);
  addIntegerRanges(out.paths);
  addIntegerRanges(webhooks);
  return out;
}
