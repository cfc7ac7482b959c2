import { describe, expect, it } from "vitest";
import { type FuzzRoute, fuzzStatuses, fuzzSuite, RUNS, SEED } from "./fuzz.js";

const fuzz = fuzzSuite();

/** Operational and account routes outside /v1/openapi.json. */
const ROUTES: FuzzRoute[] = [
  { method: "GET", path: "/healthz", params: {}, json: false },
  { method: "GET", path: "/readyz", params: {}, json: false },
  { method: "GET", path: "/account", params: { error: "", linked: "github" }, json: false },
  { method: "POST", path: "/api/auth/email-otp/send-verification-otp", params: {}, json: true },
];

describe(`fuzzing the operational and account routes (${RUNS} requests each, seed ${SEED})`, () => {
  for (const route of ROUTES) {
    const name = `${route.method} ${route.path}`;
    it(`${name}: never a 5xx, every error in the spec's shape with X-Request-Id`, async () => {
      const statuses = await fuzzStatuses(fuzz.rig, route);
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect(fuzz.rejections).toEqual([]);
    });
  }
});
