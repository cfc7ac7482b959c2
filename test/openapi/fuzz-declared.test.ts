import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { propertyRuns } from "../helpers/env.js";
import { type FuzzRig, fuzzRig, request, SEED } from "../resilience/fuzz.js";

/**
 * Every status and every header the server answers to generated requests (the resilience
 * fuzzer's generator: examples, their mutations, hostile strings, keys good and bad) is declared
 * for that status of that operation — explicitly, not only by `default` — and every header the
 * document declares required there (X-Request-Id, WWW-Authenticate on a 401, Allow on a 405) is sent.
 */

const RUNS = propertyRuns(500);
/** Headers of HTTP itself, not of this API. */
const PROTOCOL = new Set(["content-type", "content-length", "connection", "date", "vary", "transfer-encoding"]);

type HeaderDoc = { $ref?: string; required?: boolean };
type Operations = Record<
  string,
  Record<string, { responses: Record<string, { headers?: Record<string, HeaderDoc> }> }>
>;
let rig: FuzzRig;
let ops: Operations;
let components: Record<string, HeaderDoc>;
beforeAll(async () => {
  rig = await fuzzRig();
  const doc = (await (await rig.t.app.request("/v1/openapi.json")).json()) as {
    paths: Operations;
    webhooks: Operations;
    components: { headers: Record<string, HeaderDoc> };
  };
  ops = { ...doc.paths, ...doc.webhooks };
  components = doc.components.headers;
});
const isRequired = (h: HeaderDoc) =>
  (h.$ref ? components[h.$ref.replace("#/components/headers/", "")]?.required : h.required) === true;
afterAll(() => rig.close());

describe(`every status and header met is declared (${RUNS} requests per operation, seed ${SEED})`, () => {
  it("covers every operation", () => {
    expect(rig.routes.length).toBe(Object.values(ops).flatMap((item) => Object.keys(item)).length);
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])("operation #%i", async (i) => {
    const route = rig.routes[i];
    if (!route) return;
    const responses = ops[route.path]?.[route.method.toLowerCase()]?.responses ?? {};
    const problems = new Set<string>();
    await fc.assert(
      fc.asyncProperty(request(route, rig.key), async (req) => {
        // Another method is a 405 or a CORS preflight, not this operation.
        if (req.method !== route.method) return;
        const res = await rig.t.app.request(
          req.url,
          { method: req.method, headers: req.headers, body: req.body },
          { incoming: { socket: { remoteAddress: req.peer } } },
        );
        await res.arrayBuffer();
        const declared = responses[String(res.status)];
        if (!declared) {
          problems.add(`${route.method} ${route.path} → ${res.status}: status not declared`);
          return;
        }
        const names = new Set(Object.keys(declared.headers ?? {}).map((h) => h.toLowerCase()));
        for (const name of res.headers.keys()) {
          if (!PROTOCOL.has(name) && !names.has(name)) {
            problems.add(`${route.method} ${route.path} → ${res.status}: header ${name} not declared`);
          }
        }
        // A header the document declares required is on every such answer.
        for (const [name, h] of Object.entries(declared.headers ?? {})) {
          if (isRequired(h) && !res.headers.has(name)) {
            problems.add(`${route.method} ${route.path} → ${res.status}: required header ${name} missing`);
          }
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect([...problems].sort()).toEqual([]);
  });
});
