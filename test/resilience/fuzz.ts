import fc from "fast-check";
import { afterAll, beforeAll, expect } from "vitest";
import type { MailLane } from "../../src/ports/mail-lane.js";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { expectErrorShape } from "./support.js";

/** CI replays exactly these runs; FUZZ_SEED explores others locally. */
export const SEED = Number(process.env.FUZZ_SEED ?? 424242);
export const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

export interface FuzzRoute {
  method: string;
  path: string;
  /** Query parameters named by /v1/openapi.json, with their examples (valid-ish values). */
  params: Record<string, string>;
  json: boolean;
}

export interface FuzzRig {
  t: TestApp;
  key: string;
  routes: FuzzRoute[];
  close(): Promise<void>;
}

/** The Stripe webhook secret of the rig (the fuzz signs bodies with it). */
export const WEBHOOK_SECRET = "whsec_fuzz_0123456789abcdef";

/** A mail lane that accepts everything in memory: the fuzzer must not wait on SMTP. */
const memoryLane = (): MailLane => ({
  send: async () => ({ ok: true, messageId: "<fuzz@almanac>" }),
  close: async () => {},
});

/** The real app, limits out of the way, upstream fakes answering normally, one valid API key. */
export async function fuzzRig(): Promise<FuzzRig> {
  const postcodes: UpstreamFake = await fakePostcodesIo();
  const meteo: UpstreamFake = await fakeOpenMeteo();
  const t = await testApp(
    {
      POSTCODES_BASE_URL: postcodes.url,
      OPEN_METEO_BASE_URL: meteo.url,
      DEMO_HOURLY_LIMIT: "1000000",
      CONTACT_HOURLY_LIMIT: "1000000",
      CONTACT_DAILY_CAP: "10000000",
      MAIL_URL: "smtp://127.0.0.1:1",
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    },
    () => ({ mail: memoryLane() }),
  );
  const created = await t.deps.keys.create({ name: "fuzz", permissions: ["vibe.classify"] });
  type Operations = Record<
    string,
    Record<string, { parameters?: { in: string; name: string; schema?: { example?: string } }[] }>
  >;
  const doc = (await (await t.app.request("/v1/openapi.json")).json()) as { paths: Operations; webhooks: Operations };
  // Webhooks are keyed by the path they are sent to.
  const routes: FuzzRoute[] = Object.entries({ ...doc.paths, ...doc.webhooks }).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      params: Object.fromEntries(
        (op.parameters ?? []).filter((p) => p.in === "query").map((p) => [p.name, String(p.schema?.example ?? "")]),
      ),
      json: method === "post",
    })),
  );
  return {
    t,
    key: created.key,
    routes,
    close: async () => {
      await t.close();
      await Promise.all([postcodes.close(), meteo.close()]);
    },
  };
}

const HOSTILE = [
  "",
  " ",
  "%",
  "%zz",
  "%E0%A4%A",
  "%00",
  "\u0000",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "$" + "{jndi:ldap://x}",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "9".repeat(400),
  "0x1F",
  "null",
  "undefined",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "\u202e\u0301\ud83d\ude00",
  "\ud800",
  "SW1A\u00a02AA",
  "2024-02-30",
  "2024-13-01",
  "+275760-09-13",
  "GB\r\nX-Injected: 1",
];

/** Strings a client might send: examples, their mutations, hostile literals, unicode, huge. */
export const hostileString = (example = ""): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(example) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => "x".repeat(n)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat({ max: example.length }), fc.string({ maxLength: 4 }))
        .map(([i, s]) => example.slice(0, i) + s + example.slice(i)),
    },
  );

// Node 20 has String#toWellFormed; the ES2023 lib does not declare it.
const enc = (s: string) => encodeURIComponent((s as string & { toWellFormed(): string }).toWellFormed());

/** Query strings: known parameters and made-up ones, repeated, encoded or raw. */
export function queryString(params: Record<string, string>): fc.Arbitrary<string> {
  const names = [...Object.keys(params), "__proto__", "constructor", "x", "a[b]", ""];
  const pair = fc
    .constantFrom(...names)
    .chain((name) =>
      fc.tuple(
        fc.constant(name),
        hostileString(Object.hasOwn(params, name) ? (params[name] as string) : ""),
        fc.boolean(),
      ),
    );
  const pairs = fc.oneof(
    // Mostly all the known parameters with valid-ish values, so the route's logic runs.
    fc.tuple(
      ...Object.entries(params).map(([k, v]) =>
        fc.tuple(
          fc.constant(k),
          fc.oneof({ weight: 6, arbitrary: fc.constant(v) }, hostileString(v)),
          fc.constant(true),
        ),
      ),
    ),
    fc.array(pair, { maxLength: 8 }),
  );
  return fc.tuple(pairs, fc.array(pair, { maxLength: 3 })).map(([a, b]) =>
    [...a, ...b]
      .map(([k, v, encode]) => (encode ? `${enc(k)}=${enc(v)}` : `${k}=${v}`))
      .join("&")
      .replace(/[#\s]/g, encodeURIComponent),
  );
}

const json = fc.jsonValue({ maxDepth: 4 });
const texts = fc.array(hostileString("a good day"), { maxLength: 25 });
const deep = fc
  .integer({ min: 1, max: 20_000 })
  .chain((n) => fc.constantFrom(`${"[".repeat(n)}${"]".repeat(n)}`, `${'{"a":'.repeat(n)}1${"}".repeat(n)}`));
const pollution = fc.constantFrom(
  '{"__proto__":{"admin":true},"texts":["a"]}',
  '{"constructor":{"prototype":{"polluted":1}},"name":"x","email":"a@b.c","message":"m"}',
  '[{"__proto__":"x"}]',
  '{"texts":{"__proto__":[]}}',
  '{"email":{"toString":null},"name":"__proto__","message":"constructor"}',
);
const contactish = fc.record(
  {
    name: hostileString("Ada"),
    email: hostileString("ada@example.com"),
    subject: hostileString("Hi"),
    message: hostileString("Hello"),
  },
  { requiredKeys: [] },
);

/** Bodies: valid-ish shapes of every POST route, random JSON, wrong types, deep, huge, not JSON. */
export const body: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  texts.map((t) => JSON.stringify(t)),
  texts.map((t) => JSON.stringify({ texts: t })),
  contactish.map((c) => JSON.stringify(c)),
  fc.record({ email: hostileString("ada@example.com"), type: hostileString("sign-in") }).map((b) => JSON.stringify(b)),
  json.map((v) => JSON.stringify(v)),
  deep,
  pollution,
  fc.string({ maxLength: 60 }),
  fc.integer({ min: 300_000, max: 400_000 }).map((n) => JSON.stringify(["x".repeat(n)])),
);

/** Header values a Request accepts (ByteString, no CR/LF/NUL): the rest never reach the app. */
const headerValue = (example: string) =>
  hostileString(example).map((s) => s.replace(/[^\x20-\x7e\x80-\xff\t]/g, "").trim());

const authorization = (key: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constant(`Bearer ${key}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "Bearer",
        "Bearer ",
        `Bearer  ${key}`,
        `bearer ${key}`,
        `Basic ${key}`,
        `Bearer ${key}x`,
        `Bearer ${key} ${key}`,
      ),
    },
    { weight: 1, arbitrary: headerValue("Bearer alm_x").map((v) => `Bearer ${v}`) },
    { weight: 1, arbitrary: headerValue("Bearer alm_x") },
  );

const contentType = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=utf-16",
    "APPLICATION/JSON",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "multipart/form-data",
    "application/problem+json",
    "application/json;;;",
  ),
  headerValue("application/json"),
);

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The socket peer the app sees (spreads per-IP limits, as many clients would). */
  peer: string;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export function request(route: FuzzRoute, key: string): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constant(route.method) },
        { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
      ),
      query: fc.oneof(fc.constant(""), queryString(route.params)),
      body: route.json
        ? body
        : fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: body }),
      authorization: authorization(key),
      contentType: route.json
        ? fc.oneof({ weight: 3, arbitrary: fc.constant("application/json") }, { weight: 2, arbitrary: contentType })
        : contentType,
      idempotencyKey: fc.option(headerValue("b7e1c2"), { nil: undefined }),
      forwardedFor: fc.option(headerValue("203.0.113.9"), { nil: undefined }),
      cookie: fc.option(headerValue("better-auth.session_token=abc.def"), { nil: undefined }),
      peer: fc.ipV4(),
      origin: fc.option(fc.constantFrom("http://localhost:8080", "https://evil.example", "null"), { nil: undefined }),
    })
    .map((r) => {
      const headers: Record<string, string> = {};
      if (r.authorization !== undefined) headers.Authorization = r.authorization;
      if (r.contentType !== undefined) headers["Content-Type"] = r.contentType;
      if (r.idempotencyKey !== undefined) headers["Idempotency-Key"] = r.idempotencyKey;
      if (r.forwardedFor !== undefined) headers["X-Forwarded-For"] = r.forwardedFor;
      if (r.cookie !== undefined) headers.Cookie = r.cookie;
      if (r.origin !== undefined) headers.Origin = r.origin;
      const hasBody = r.method !== "GET" && r.method !== "HEAD" && r.body !== undefined;
      return {
        method: r.method,
        url: `http://localhost${route.path}${r.query ? `?${r.query}` : ""}`,
        headers,
        peer: r.peer,
        ...(hasBody && { body: r.body }),
      };
    });
}

/** The properties every answer must have, whatever was sent. */
export async function checkAnswer(rig: FuzzRig, req: FuzzRequest): Promise<number> {
  const res = await rig.t.app.request(
    req.url,
    { method: req.method, headers: req.headers, body: req.body },
    { incoming: { socket: { remoteAddress: req.peer } } },
  );
  const text = await res.text();
  const requestId = res.headers.get("x-request-id");
  const label = `${req.method} ${req.url.slice(0, 200)}`;
  expect(requestId, label).toBeTruthy();
  expect(res.status, `${label} → ${text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400 && req.method !== "HEAD") expectErrorShape(res.status, text, requestId);
  return res.status;
}

/**
 * Registers beforeAll/afterAll in the calling file: a rig, and every unhandled rejection seen while
 * it runs (for the tests to assert there were none).
 */
export function fuzzSuite(): { readonly rig: FuzzRig; readonly rejections: unknown[] } {
  const suite = { rig: undefined as unknown as FuzzRig, rejections: [] as unknown[] };
  const onRejection = (err: unknown) => suite.rejections.push(err);
  beforeAll(async () => {
    process.on("unhandledRejection", onRejection);
    suite.rig = await fuzzRig();
  });
  afterAll(async () => {
    process.off("unhandledRejection", onRejection);
    await suite.rig?.close();
  });
  return suite;
}

/** Sends RUNS generated requests (seed SEED) to `route`, each through checkAnswer; counts and logs the statuses. */
export async function fuzzStatuses(rig: FuzzRig, route: FuzzRoute): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request(route, rig.key), async (req) => {
      const status = await checkAnswer(rig, req);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }),
    { seed: SEED, numRuns: RUNS },
  );
  console.info(`${route.method} ${route.path}: ${RUNS} runs, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  return statuses;
}
