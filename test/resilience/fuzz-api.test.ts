import { describe, expect, it } from "vitest";
import { fuzzStatuses, fuzzSuite, RUNS, SEED } from "./fuzz.js";

const fuzz = fuzzSuite();

/** Every route /v1/openapi.json describes (the route inventory test keeps that list complete). */
const ROUTES = [
  "GET /v1/moon",
  "GET /v1/sun",
  "GET /v1/holidays",
  "GET /v1/holidays/working-days",
  "GET /v1/vat",
  "GET /v1/postcode",
  "GET /v1/weather",
  "POST /v1/mail/contact",
  "POST /v1/vibe/classify",
  "GET /v1/usage",
  "POST /v1/billing/webhook",
];

/** Routes a generated request cannot pass: a Stripe signature needs the secret. */
const NO_SUCCESS_EXPECTED = new Set(["POST /v1/billing/webhook"]);

describe(`fuzzing every API route (${RUNS} requests each, seed ${SEED})`, () => {
  it("the list above is every route of /v1/openapi.json", () => {
    expect(fuzz.rig.routes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([...ROUTES].sort());
  });

  for (const name of ROUTES) {
    it(`${name}: never a 5xx, every error in the spec's shape with X-Request-Id`, async () => {
      const route = fuzz.rig.routes.find((r) => `${r.method} ${r.path}` === name);
      if (!route) throw new Error(`${name} is not in /v1/openapi.json`);
      const statuses = await fuzzStatuses(fuzz.rig, route);
      expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(RUNS);
      // The generator reaches the route's logic, not only its validation.
      if (!NO_SUCCESS_EXPECTED.has(name)) expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect(fuzz.rejections).toEqual([]);
    });
  }
});
