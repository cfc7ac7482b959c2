import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MISSING_KEY_MESSAGE, REJECTED_KEY_MESSAGE, unavailableMessage } from "../../src/http/key-auth.js";
import type { CreateKeyInput } from "../../src/ports/key-store.js";
import { errorOf } from "../helpers/app.js";
import { bearer, classify, embeddedHarness, type Harness, PERMISSION, unkeyHarness } from "../helpers/key-stores.js";

/**
 * The auth and limit cases every keyed route shares, from one table, against each keyed route and
 * both key stores. Each route keeps its own happy-path and error tests beside it (test/vibe,
 * test/keys, test/http/demo-tier.test.ts); this suite holds them to one behaviour per case.
 */

/** What a route answers in one case. */
type Outcome =
  | "served" // 200
  | "demo" // 200 under the demo tier (its RateLimit-Policy), the key not consulted or not reachable
  | "missing" // 401 unauthorized, no reason: no usable `Authorization: Bearer <token>`
  | "invalid" // 401 unauthorized, reason INVALID
  | "forbidden" // 403 forbidden: the key lacks the route's permission
  | "rate_limited" // 429 RATE_LIMITED with Retry-After
  | "usage_exceeded" // 429 USAGE_EXCEEDED with Retry-After
  | "unavailable"; // 503 unkey_unavailable with Retry-After: 2

interface Case {
  name: string;
  /** The request's headers, made from a key created for this case (undefined: no key needed). */
  key?: Partial<CreateKeyInput>;
  headers?: (key: string) => Record<string, string>;
  /** Runs before the request that is judged (spends what the case needs spent). */
  before?: (h: Harness, route: KeyedRoute, key: string) => Promise<void>;
  /** Revokes the key before the request. */
  revoke?: boolean;
  /** The key service is down during the request. */
  down?: boolean;
}

interface KeyedRoute {
  name: string;
  request(h: Harness, headers: Record<string, string>): Promise<Response>;
  expect: Record<string, Outcome>;
}

const CASES: Case[] = [
  { name: "missing key", headers: () => ({}) },
  { name: "malformed header", headers: () => ({ Authorization: "Basic YWxhZGRpbjpvcGVu" }) },
  { name: "unknown key", headers: () => bearer("alm_4vJ9unknownKeyThatWasNeverIssued") },
  { name: "revoked key", key: {}, revoke: true },
  { name: "expired key", key: { expiresAt: new Date(Date.now() - 60_000).toISOString() } },
  { name: "key without the permission", key: { permissions: ["other.thing"] } },
  {
    name: "rate-limited key",
    key: { ratelimit: { limit: 1, durationSec: 60 } },
    before: async (h, route, key) => {
      expect((await route.request(h, bearer(key))).status).toBe(200);
    },
  },
  {
    name: "key without uses left",
    key: { remaining: 1 },
    before: async (h, _route, key) => {
      expect((await classify(h.t, ["spend the last use"], bearer(key))).status).toBe(200);
    },
  },
  { name: "key service down", key: {}, down: true },
];

const ROUTES: KeyedRoute[] = [
  {
    name: "POST /v1/vibe/classify",
    request: async (h, headers) => classify(h.t, ["What a good day"], headers),
    expect: {
      "missing key": "missing",
      "malformed header": "missing",
      "unknown key": "invalid",
      "revoked key": "invalid",
      "expired key": "invalid",
      "key without the permission": "forbidden",
      "rate-limited key": "rate_limited",
      "key without uses left": "usage_exceeded",
      "key service down": "unavailable",
    },
  },
  {
    // A lookup with a key: verified and charged instead of the demo tier; no permission needed.
    name: "GET /v1/moon with a key",
    request: async (h, headers) => h.t.app.request("/v1/moon?date=2024-01-25", { headers }),
    expect: {
      "missing key": "demo",
      "malformed header": "missing",
      "unknown key": "invalid",
      "revoked key": "invalid",
      "expired key": "invalid",
      "key without the permission": "served",
      "rate-limited key": "rate_limited",
      "key without uses left": "usage_exceeded",
      "key service down": "demo",
    },
  },
  {
    // Free: spends no use, so an exhausted key still sees its usage; any valid key may call it.
    name: "GET /v1/usage",
    request: async (h, headers) => h.t.app.request("/v1/usage", { headers }),
    expect: {
      "missing key": "missing",
      "malformed header": "missing",
      "unknown key": "invalid",
      "revoked key": "invalid",
      "expired key": "invalid",
      "key without the permission": "served",
      "rate-limited key": "rate_limited",
      "key without uses left": "served",
      "key service down": "unavailable",
    },
  },
];

async function expectOutcome(res: Response, outcome: Outcome, store: Harness["name"]): Promise<void> {
  if (outcome === "served" || outcome === "demo") {
    expect(res.status, await res.clone().text()).toBe(200);
    await res.arrayBuffer();
    const demo = res.headers.get("ratelimit-policy")?.startsWith('"demo"') ?? false;
    expect(demo).toBe(outcome === "demo");
    return;
  }
  const { error } = await errorOf(res);
  switch (outcome) {
    case "missing":
      expect(res.status).toBe(401);
      expect(error).toMatchObject({ code: "unauthorized", message: MISSING_KEY_MESSAGE });
      expect(error.reason).toBeUndefined();
      break;
    case "invalid":
      expect(res.status).toBe(401);
      expect(error).toMatchObject({ code: "unauthorized", reason: "INVALID", message: REJECTED_KEY_MESSAGE });
      break;
    case "forbidden":
      expect(res.status).toBe(403);
      expect(error).toMatchObject({ code: "forbidden", message: `API key lacks the permission "${PERMISSION}".` });
      break;
    case "rate_limited":
    case "usage_exceeded":
      expect(res.status).toBe(429);
      expect(error).toMatchObject({
        code: "rate_limited",
        reason: outcome.toUpperCase(),
        message: REJECTED_KEY_MESSAGE,
      });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      break;
    case "unavailable":
      expect(res.status).toBe(503);
      expect(error).toMatchObject({ code: "unkey_unavailable", message: unavailableMessage(store) });
      expect(res.headers.get("retry-after")).toBe("2");
      break;
  }
}

describe.each([
  ["embedded", embeddedHarness],
  ["unkey", unkeyHarness],
] as const)("every keyed route, one table of auth and limit cases (%s key store)", (_store, make) => {
  let h: Harness;
  beforeAll(async () => {
    h = await make();
  });
  afterAll(() => h.close());

  describe.each(ROUTES)("$name", (route) => {
    it.each(CASES)("$name", async (c) => {
      let headers = c.headers?.("") ?? {};
      if (c.key) {
        const { key, id } = await h.keys.create({ name: "shared suite", permissions: [PERMISSION], ...c.key });
        if (c.revoke) expect(await h.keys.revoke(id)).toBe(true);
        await c.before?.(h, route, key);
        headers = bearer(key);
      }
      if (c.down) await h.down();
      try {
        await expectOutcome(await route.request(h, headers), route.expect[c.name] as Outcome, h.name);
      } finally {
        if (c.down) await h.up();
      }
    });
  });

  it("covers every case on every route", () => {
    for (const route of ROUTES) expect(Object.keys(route.expect).sort()).toEqual(CASES.map((c) => c.name).sort());
  });
});
