import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { bearer, classify, embeddedHarness, type Harness, PERMISSION } from "../helpers/key-stores.js";

const INVALID_MESSAGE = "Request body is invalid: send 1 to 20 non-empty strings, each at most 5,000 characters.";

let h: Harness;
let key: string;
beforeAll(async () => {
  // VADER's own answers below; the trained default is covered by trained.test.ts
  h = await embeddedHarness({ CLASSIFIER_MODEL: "vader" });
  key = (await h.keys.create({ name: "t", permissions: [PERMISSION] })).key;
});
afterAll(() => h.close());

type Result = { index: number; label: string; confidence: number; scores: Record<string, number> };

describe("POST /v1/vibe/classify: success", () => {
  it("answers model, labels, results in input order with every score, and usage", async () => {
    const texts = ["I love this, it is wonderful!", "The parcel arrived on Tuesday.", "Terrible, awful support."];
    for (const body of [texts, { texts }]) {
      const res = await classify(h.t, body, bearer(key));
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      const json = (await res.json()) as { model: object; labels: string[]; results: Result[]; usage: object };
      expect(json.model).toEqual({ provider: "embedded", name: "vader-sentiment", version: "1.1.3" });
      expect(json.labels).toEqual(["positive", "neutral", "negative"]);
      expect(json.usage).toEqual({ texts: 3 });
      expect(json.results.map((r) => [r.index, r.label])).toEqual([
        [0, "positive"],
        [1, "neutral"],
        [2, "negative"],
      ]);
      for (const r of json.results) {
        const { positive, neutral, negative } = r.scores as { positive: number; neutral: number; negative: number };
        expect(positive + neutral + negative).toBeCloseTo(1, 10);
        expect(r.confidence).toBe(Math.max(positive, neutral, negative));
        expect(r.confidence).toBe(r.scores[r.label]);
      }
    }
  });

  it("accepts 20 texts of 5,000 characters", async () => {
    const res = await classify(
      h.t,
      Array.from({ length: 20 }, () => "a".repeat(5000)),
      bearer(key),
    );
    expect(res.status).toBe(200);
  });
});

describe("POST /v1/vibe/classify: what counts as a text", () => {
  // The default model also flags it `no_letters` (readable.test.ts); this suite runs VADER.
  it("non-empty means at least one character: a text of spaces is classified, neutral", async () => {
    const res = await classify(h.t, [" ", "\u00a0"], bearer(key));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Result[] };
    expect(body.results.map((r) => r.label)).toEqual(["neutral", "neutral"]);
  });

  it("5,000 characters are code points: 5,000 emoji pass, 5,001 do not", async () => {
    expect((await classify(h.t, ["😀".repeat(5000)], bearer(key))).status).toBe(200);
    expect((await classify(h.t, ["😀".repeat(5001)], bearer(key))).status).toBe(400);
  });

  it("other fields beside texts are ignored", async () => {
    const res = await classify(h.t, { texts: ["What a lovely day"], lang: "de" }, bearer(key));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: object }).usage).toEqual({ texts: 1 });
  });
});

describe("POST /v1/vibe/classify: the body is read as JSON whatever Content-Type says", () => {
  it.each([undefined, "text/plain", "application/json; charset=utf-8", "APPLICATION/JSON"])(
    "Content-Type %s → 200",
    async (type) => {
      const res = await h.t.app.request("/v1/vibe/classify", {
        method: "POST",
        headers: { ...bearer(key), ...(type !== undefined && { "Content-Type": type }) },
        // Bytes, not a string: fetch would add text/plain to a string body.
        body: new TextEncoder().encode(JSON.stringify(["What a lovely day"])),
      });
      expect(res.status).toBe(200);
    },
  );
});

describe("POST /v1/vibe/classify: body validation (after auth)", () => {
  it.each([
    ["no body", undefined],
    ["an empty body", ""],
    ["not JSON", "texts=hello"],
    ["truncated JSON", '["good"'],
  ])("%s → 400 invalid_body, the body must be JSON", async (_name, body) => {
    const res = await h.t.app.request("/v1/vibe/classify", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...bearer(key) },
      ...(body !== undefined && { body }),
    });
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error.code).toBe("invalid_body");
    expect(error.message).toBe("Request body must be JSON.");
  });

  it.each([
    ["an empty array", [], { formErrors: ["send at least 1 text"], fieldErrors: {} }],
    ["21 texts", Array.from({ length: 21 }, () => "x"), { formErrors: ["send at most 20 texts"], fieldErrors: {} }],
    ["an empty string", ["good", ""], { formErrors: [], fieldErrors: { 1: ["must not be empty"] } }],
    ["a number", ["good", 7], { formErrors: [], fieldErrors: { 1: ["must be a string"] } }],
    [
      "a text over 5,000 characters",
      ["a".repeat(5001)],
      { formErrors: [], fieldErrors: { 0: ["must be at most 5,000 characters"] } },
    ],
    ["texts: an empty array", { texts: [] }, { formErrors: [], fieldErrors: { texts: ["send at least 1 text"] } }],
    ["texts: an empty string", { texts: [""] }, { formErrors: [], fieldErrors: { texts: ["must not be empty"] } }],
    [
      "texts missing",
      { text: ["good"] },
      { formErrors: [], fieldErrors: { texts: ['expected a JSON array of strings or an object {"texts": [...]}'] } },
    ],
    [
      "a bare string",
      '"good"',
      { formErrors: ['expected a JSON array of strings or an object {"texts": [...]}'], fieldErrors: {} },
    ],
    [
      "null",
      "null",
      { formErrors: ['expected a JSON array of strings or an object {"texts": [...]}'], fieldErrors: {} },
    ],
  ])("%s → 400 invalid_body with formErrors and fieldErrors", async (_name, body, details) => {
    const res = await classify(h.t, body, bearer(key));
    expect(res.status).toBe(400);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({ code: "invalid_body", message: INVALID_MESSAGE });
    expect(error.details).toEqual(details);
  });

  it("an invalid body spends no use of the key", async () => {
    const { key: limited, id } = await h.keys.create({ name: "one", permissions: [PERMISSION], remaining: 1 });
    expect((await classify(h.t, [], bearer(limited))).status).toBe(400);
    expect((await classify(h.t, "nope", bearer(limited))).status).toBe(400);
    expect((await h.keys.list()).find((k) => k.id === id)?.remaining).toBe(1);
    expect((await classify(h.t, ["good"], bearer(limited))).status).toBe(200);
    expect((await classify(h.t, ["good"], bearer(limited))).status).toBe(429);
  });
});

describe("POST /v1/vibe/classify: Idempotency-Key", () => {
  it("the same key and body returns the stored answer, marked and not charged again", async () => {
    const { key: k, id } = await h.keys.create({ name: "idem", permissions: [PERMISSION], remaining: 2 });
    const headers = { ...bearer(k), "Idempotency-Key": "order-1" };
    const first = await classify(h.t, ["good", "bad"], headers);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    const replay = await classify(h.t, { texts: ["good", "bad"] }, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(firstBody);
    expect((await h.keys.list()).find((x) => x.id === id)?.remaining).toBe(1);
  });

  it("a paid answer is replayed after the key ran out (free, not 429); a new call is 429 USAGE_EXCEEDED", async () => {
    const { key: k, id } = await h.keys.create({ name: "idem-last", permissions: [PERMISSION], remaining: 1 });
    const headers = { ...bearer(k), "Idempotency-Key": "last-use" };
    const first = await classify(h.t, ["good"], headers);
    expect(first.status).toBe(200);
    const replay = await classify(h.t, ["good"], headers);
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(await replay.text()).toBe(await first.text());
    const fresh = await classify(h.t, ["good"], { ...bearer(k), "Idempotency-Key": "next" });
    expect([fresh.status, (await errorOf(fresh)).error.reason]).toEqual([429, "USAGE_EXCEEDED"]);
    expect((await h.keys.list()).find((x) => x.id === id)?.remaining).toBe(0);
  });

  it("the same key with another body → 409 conflict, not charged", async () => {
    const { key: k, id } = await h.keys.create({ name: "idem2", permissions: [PERMISSION], remaining: 5 });
    const headers = { ...bearer(k), "Idempotency-Key": "order-2" };
    expect((await classify(h.t, ["good"], headers)).status).toBe(200);
    const res = await classify(h.t, ["something else"], headers);
    expect(res.status).toBe(409);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({
      code: "conflict",
      message: "Idempotency-Key was already used with a different request body.",
    });
    expect((await h.keys.list()).find((x) => x.id === id)?.remaining).toBe(4);
  });

  it("keys are per API key: another key's same Idempotency-Key runs afresh", async () => {
    const a = await h.keys.create({ name: "a", permissions: [PERMISSION] });
    const b = await h.keys.create({ name: "b", permissions: [PERMISSION] });
    expect((await classify(h.t, ["good"], { ...bearer(a.key), "Idempotency-Key": "shared" })).status).toBe(200);
    const other = await classify(h.t, ["bad"], { ...bearer(b.key), "Idempotency-Key": "shared" });
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a replay still verifies the key: revoked since → 401", async () => {
    const { key: k, id } = await h.keys.create({ name: "r", permissions: [PERMISSION] });
    const headers = { ...bearer(k), "Idempotency-Key": "order-3" };
    expect((await classify(h.t, ["good"], headers)).status).toBe(200);
    await h.keys.revoke(id);
    const res = await classify(h.t, ["good"], headers);
    expect(res.status).toBe(401);
    expect((await errorOf(res)).error.reason).toBe("INVALID");
  });

  it("a malformed Idempotency-Key → 400 invalid_body", async () => {
    const res = await classify(h.t, ["good"], { ...bearer(key), "Idempotency-Key": "x".repeat(256) });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error.message).toBe("Idempotency-Key must be 1 to 255 visible ASCII characters.");
  });
});

describe("API description", () => {
  it("documents POST /v1/vibe/classify with bearer security, the body and examples", async () => {
    const doc = (await (await h.t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        { post?: { security?: unknown; requestBody?: unknown; responses: Record<string, unknown> } }
      >;
      components: { securitySchemes?: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    const op = doc.paths["/v1/vibe/classify"]?.post;
    expect(op?.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes?.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(Object.keys(op?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "409", "429", "502", "503"]),
    );
    expect(JSON.stringify(op?.requestBody)).toContain("#/components/schemas/ClassifyRequest");
    expect(JSON.stringify(doc.components.schemas.ClassifyRequest)).toContain('"texts"');
    expect(JSON.stringify(op?.responses["200"])).toContain('"usage"');
  });
});
