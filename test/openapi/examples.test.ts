import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_REQUEST } from "../../src/features/vibe/schema.js";
import { type FuzzRig, fuzzRig } from "../resilience/fuzz.js";

/**
 * The 200 examples of the document are real answers: each is the live answer to the request it
 * illustrates, field by field (an example may list fewer array items than the answer has).
 */

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>
  >;
};

let rig: FuzzRig;
let doc: Doc;
beforeAll(async () => {
  rig = await fuzzRig();
  doc = (await (await rig.t.app.request("/v1/openapi.json")).json()) as Doc;
});
afterAll(() => rig.close());

/** Where `example` differs from `live` (JSON pointer-ish paths); arrays: each example item is found in the answer. */
function differences(example: unknown, live: unknown, at = ""): string[] {
  if (Array.isArray(example)) {
    if (!Array.isArray(live)) return [`${at}: example is an array, answer is ${JSON.stringify(live)}`];
    return example.flatMap((item, i) =>
      live.some((l) => differences(item, l).length === 0)
        ? []
        : [
            `${at}/${i}: ${JSON.stringify(item).slice(0, 120)} is not in the answer (${JSON.stringify(live[i]).slice(0, 120)})`,
          ],
    );
  }
  if (typeof example === "object" && example !== null) {
    if (typeof live !== "object" || live === null) return [`${at}: answer is ${JSON.stringify(live)}`];
    const keys = new Set([...Object.keys(example), ...Object.keys(live)]);
    return [...keys].flatMap((k) =>
      differences((example as Record<string, unknown>)[k], (live as Record<string, unknown>)[k], `${at}/${k}`),
    );
  }
  return Object.is(example, live) ? [] : [`${at}: example ${JSON.stringify(example)}, answer ${JSON.stringify(live)}`];
}

/**
 * [path, method, the request the example illustrates]. Not here: usage (a key's history), the
 * webhook (a Stripe signature), postcode and weather (upstream data of the day, faked in tests).
 */
const EXAMPLES: [string, string, string, RequestInit?][] = [
  ["/v1/moon", "get", "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1&phases=2"],
  ["/v1/sun", "get", "/v1/sun?lat=51.5&lon=-0.125&date=2025-06-21&tz=Europe/London"],
  ["/v1/holidays", "get", "/v1/holidays?country=GB&region=ENG&year=2024"],
  ["/v1/holidays/working-days", "get", "/v1/holidays/working-days?country=GB&region=ENG&date=2024-12-25&add=3"],
  ["/v1/vat", "get", "/v1/vat?code=DE136695976&date=2020-08-01"],
  [
    "/v1/vibe/classify",
    "post",
    "/v1/vibe/classify",
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(EXAMPLE_REQUEST) },
  ],
];

describe("the document's examples are live answers (21.8)", () => {
  it.each(EXAMPLES)("%s: the 200 example is what the server answers", async (path, method, url, init) => {
    const example = doc.paths[path]?.[method]?.responses["200"]?.content?.["application/json"]?.example;
    expect(example, `${method} ${path} has a 200 example`).toBeDefined();
    const headers = { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${rig.key}` };
    const res = await rig.t.app.request(url, { ...init, headers });
    expect(res.status).toBe(200);
    const live = (await res.json()) as { vat_number?: { registration?: unknown } };
    // The example's registration is VIES's answer; this server has no registry configured.
    const registration = (example as typeof live).vat_number?.registration;
    if (live.vat_number && registration) live.vat_number.registration = registration;
    expect(differences(example, live)).toEqual([]);
  });
});
