import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MISSING_KEY_MESSAGE, REJECTED_KEY_MESSAGE, unavailableMessage } from "../../src/http/key-auth.js";
import { errorOf, expectRateLimited } from "../helpers/app.js";
import { bearer, classify, embeddedHarness, type Harness, PERMISSION, unkeyHarness } from "../helpers/key-stores.js";

const TEXTS = ["What a good day", "bad service"];

/** The auth table of docs/api.md (`POST /v1/vibe/classify`), row by row, identical for both key stores. */
describe.each([
  ["embedded", embeddedHarness],
  ["unkey", unkeyHarness],
] as const)("POST /v1/vibe/classify auth (%s key store)", (_name, make) => {
  let h: Harness;
  beforeAll(async () => {
    h = await make();
  });
  afterAll(() => h.close());
  beforeEach(() => {
    if (h.unkey) h.unkey.calls.length = 0;
  });

  const create = (over: Parameters<Harness["keys"]["create"]>[0] | object = {}) =>
    h.keys.create({ name: "test", permissions: [PERMISSION], ...over });

  /** The fake Unkey got exactly one verification with the root key and the route's permission. */
  function expectVerifiedOnce(key: string) {
    if (!h.unkey) return;
    expect(h.unkey.verifyCalls).toHaveLength(1);
    expect(h.unkey.verifyCalls[0]?.authorization).toBe(`Bearer ${h.unkey.rootKey}`);
    expect(h.unkey.verifyCalls[0]?.body).toMatchObject({ key, permissions: PERMISSION });
  }

  async function expectMissing(headers: Record<string, string>) {
    const res = await classify(h.t, TEXTS, headers);
    expect(res.status).toBe(401);
    const { error } = await errorOf(res);
    expect(error.code).toBe("unauthorized");
    expect(error.reason).toBeUndefined();
    expect(error.message).toBe(MISSING_KEY_MESSAGE);
    expect(error.message).toContain("Authorization: Bearer <token>");
    if (h.unkey) expect(h.unkey.verifyCalls).toHaveLength(0);
  }

  it("a valid key classifies (200), verified once", async () => {
    const { key } = await create();
    const res = await classify(h.t, TEXTS, bearer(key));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: { label: string }[] };
    expect(body.results.map((r) => r.label)).toEqual(["positive", "negative"]);
    expectVerifiedOnce(key);
  });

  it("no Authorization header → 401 without reason", () => expectMissing({}));
  it("`Bearer  x` (two spaces) → 401 without reason", () => expectMissing({ Authorization: "Bearer  alm_x" }));
  it("`Basic x` → 401 without reason", () => expectMissing({ Authorization: "Basic YWxhZGRpbjpvcGVu" }));
  it("`Bearer` alone → 401 without reason", () => expectMissing({ Authorization: "Bearer" }));
  // RFC 9110 §11.1: the scheme is case-insensitive; the one space and the token are not negotiable.
  it.each(["bearer", "BEARER", "bEaReR"])("the scheme in any case (`%s <key>`) is a key", async (scheme) => {
    const { key } = await create();
    const res = await classify(h.t, TEXTS, { Authorization: `${scheme} ${key}` });
    expect(res.status).toBe(200);
    expectVerifiedOnce(key);
  });
  it("`Bearer\tx` (a tab) → 401 without reason", () => expectMissing({ Authorization: "Bearer\talm_x" }));
  it("`Bearer x y` → 401 without reason", () => expectMissing({ Authorization: "Bearer alm_x alm_y" }));
  it("a session cookie without a key → 401 without reason", () =>
    expectMissing({ Cookie: "better-auth.session_token=abc.def; almanac_session=xyz" }));

  async function expectRejected(key: string) {
    const res = await classify(h.t, TEXTS, bearer(key));
    expect(res.status).toBe(401);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({ code: "unauthorized", reason: "INVALID", message: REJECTED_KEY_MESSAGE });
    expectVerifiedOnce(key);
  }

  it("an unknown key → 401 INVALID", () => expectRejected("alm_4vJ9unknownKeyThatWasNeverIssued"));

  it("an expired key → 401 INVALID", async () => {
    const { key } = await create({ expiresAt: new Date(Date.now() - 60_000).toISOString() });
    await expectRejected(key);
  });

  it("a revoked key → 401 INVALID", async () => {
    const { key, id } = await create();
    expect(await h.keys.revoke(id)).toBe(true);
    await expectRejected(key);
  });

  it("a key without the permission → 403 forbidden", async () => {
    const { key } = await create({ permissions: ["other.thing"] });
    const res = await classify(h.t, TEXTS, bearer(key));
    expect(res.status).toBe(403);
    const { error } = await errorOf(res);
    expect(error).toEqual(
      expect.objectContaining({ code: "forbidden", message: `API key lacks the permission "${PERMISSION}".` }),
    );
    expect(error.reason).toBeUndefined();
    expectVerifiedOnce(key);
  });

  it("a rate-limited key → 429 RATE_LIMITED with Retry-After", async () => {
    const { key } = await create({ ratelimit: { limit: 1, durationSec: 60 } });
    expect((await classify(h.t, TEXTS, bearer(key))).status).toBe(200);
    if (h.unkey) h.unkey.calls.length = 0;
    const res = await classify(h.t, TEXTS, bearer(key));
    const retryAfter = await expectRateLimited(res, "RATE_LIMITED", "API key was rejected.");
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expectVerifiedOnce(key);
  });

  it("a key with a rate limit: each answer carries its RateLimit headers, the 200s and the 429", async () => {
    const { key } = await create({ ratelimit: { limit: 2, durationSec: 60 } });
    const states: (string | null)[] = [];
    for (const status of [200, 200, 429]) {
      const res = await classify(h.t, TEXTS, bearer(key));
      expect(res.status).toBe(status);
      await res.arrayBuffer();
      expect(res.headers.get("ratelimit-policy")).toBe('"key";q=2;w=60');
      states.push(res.headers.get("ratelimit"));
    }
    expect(states.map((s) => /^"key";r=(\d+);t=(\d+)$/.exec(s ?? "")?.[1])).toEqual(["1", "0", "0"]);
    for (const s of states) expect(Number(/;t=(\d+)$/.exec(s ?? "")?.[1])).toBeLessThanOrEqual(60);
    // A key without a rate limit of its own sends none.
    const { key: free } = await create();
    const res = await classify(h.t, TEXTS, bearer(free));
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit")).toBeNull();
    // ...and the document declares both headers on the statuses that carry them.
    const doc = (await (await h.t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, { post: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    for (const status of ["200", "400", "409", "429", "502"]) {
      const headers = Object.keys(doc.paths["/v1/vibe/classify"]?.post.responses[status]?.headers ?? {});
      expect(headers).toEqual(expect.arrayContaining(["RateLimit", "RateLimit-Policy"]));
    }
  });

  it("a key without uses left → 429 USAGE_EXCEEDED with Retry-After", async () => {
    const { key } = await create({ remaining: 1 });
    expect((await classify(h.t, TEXTS, bearer(key))).status).toBe(200);
    if (h.unkey) h.unkey.calls.length = 0;
    const res = await classify(h.t, TEXTS, bearer(key));
    await expectRateLimited(res, "USAGE_EXCEEDED", "API key was rejected.");
    expectVerifiedOnce(key);
  });

  it("auth comes before the body: a bad key with a bad body → 401, a good key → 400", async () => {
    expect((await classify(h.t, "not json", bearer("alm_unknown"))).status).toBe(401);
    expect((await classify(h.t, [], {})).status).toBe(401);
    const { key } = await create();
    const res = await classify(h.t, "not json", bearer(key));
    expect(res.status).toBe(400);
  });

  it("verifier down → 503 unkey_unavailable with Retry-After, never a pass", async () => {
    const { key } = await create();
    await h.down();
    try {
      const res = await classify(h.t, TEXTS, bearer(key));
      expect(res.status).toBe(503);
      const { error } = await errorOf(res);
      expect(error).toMatchObject({
        code: "unkey_unavailable",
        message: unavailableMessage(h.name),
      });
      expect(error.reason).toBeUndefined();
      expect(res.headers.get("retry-after")).toBe("2");
    } finally {
      await h.up();
    }
    expect((await classify(h.t, TEXTS, bearer(key))).status).toBe(200);
  });
});
