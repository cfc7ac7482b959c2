import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { normaliseLabel } from "../../../src/adapters/classifier/upstream.js";
import { FakeClassifierProvider } from "../../fakes/classifier-provider.js";
import { errorOf } from "../../helpers/app.js";
import { bearer, classify, embeddedHarness, type Harness, PERMISSION } from "../../helpers/key-stores.js";

let h: Harness;
let provider: FakeClassifierProvider;
let key: string;
beforeAll(async () => {
  provider = await new FakeClassifierProvider().start();
  h = await embeddedHarness({
    CLASSIFIER_URL: `${provider.url}/models/cardiffnlp/twitter-roberta-base-sentiment-latest`,
    CLASSIFIER_TOKEN: "hf_test_token",
    UPSTREAM_TIMEOUT_MS: "300",
  });
  key = (await h.keys.create({ name: "u", permissions: [PERMISSION] })).key;
});
afterAll(async () => {
  await h.close();
  await provider.close();
});
beforeEach(() => {
  Object.assign(provider, { fault: null, style: "upper", wrongLength: false, unknownLabel: false, status: null });
  provider.calls.length = 0;
});

describe("upstream classifier (Hugging Face–style)", () => {
  it.each(["upper", "cardiff", "short"] as const)("normalises %s labels and keeps input order", async (style) => {
    provider.style = style;
    const res = await classify(h.t, ["so good", "meh", "so bad"], bearer(key));
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      model: object;
      results: { index: number; label: string; confidence: number; scores: Record<string, number> }[];
    };
    expect(body.model).toEqual({
      provider: "upstream",
      name: "cardiffnlp/twitter-roberta-base-sentiment-latest",
      version: null,
    });
    expect(body.results.map((r) => r.label)).toEqual(["positive", "neutral", "negative"]);
    expect(body.results[0]).toEqual({
      index: 0,
      label: "positive",
      confidence: 0.9,
      scores: { positive: 0.9, neutral: 0.07, negative: 0.03 },
    });
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]?.authorization).toBe("Bearer hf_test_token");
    expect(provider.calls[0]?.body).toEqual({ inputs: ["so good", "meh", "so bad"] });
  });

  const faults: [string, () => void][] = [
    ["500", () => (provider.fault = "500")],
    ["503 with an HF error body", () => (provider.status = 503)],
    ["garbage", () => (provider.fault = "garbage")],
    ["malformed JSON", () => (provider.fault = "malformed")],
    ["a hang (timeout)", () => (provider.fault = "hang")],
    ["a reset", () => (provider.fault = "reset")],
    ["a redirect (never followed)", () => (provider.fault = "redirect")],
    ["a 64 MiB body (cap UPSTREAM_MAX_BYTES)", () => (provider.fault = "huge")],
    ["a declared 300 MB body", () => (provider.fault = "huge-declared")],
    ["a body dripping past the deadline", () => (provider.fault = "drip")],
    ["the wrong number of results", () => (provider.wrongLength = true)],
    ["an unknown label", () => (provider.unknownLabel = true)],
  ];
  it.each(faults)("%s → 502 upstream_error", async (_name, arm) => {
    arm();
    const res = await classify(h.t, ["good", "bad"], bearer(key));
    expect(res.status).toBe(502);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({
      code: "upstream_error",
      message: "The classification provider failed; retry later.",
    });
  });

  it("a redirect to a working provider is still not followed: the texts go nowhere else", async () => {
    const redirector = createServer((req, res) => {
      res.writeHead(307, { location: `${provider.url}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const port = (redirector.address() as AddressInfo).port;
    const other = await embeddedHarness({
      CLASSIFIER_URL: `http://127.0.0.1:${port}/models/x`,
      UPSTREAM_TIMEOUT_MS: "300",
    });
    try {
      const otherKey = (await other.keys.create({ name: "r", permissions: [PERMISSION] })).key;
      const res = await classify(other.t, ["good"], bearer(otherKey));
      expect(res.status).toBe(502);
      expect(provider.calls).toHaveLength(0);
    } finally {
      await other.close();
      redirector.close();
    }
  });

  it("refused connections → 502 upstream_error", async () => {
    await provider.refuse();
    try {
      const res = await classify(h.t, ["good"], bearer(key));
      expect(res.status).toBe(502);
      expect((await errorOf(res)).error.code).toBe("upstream_error");
    } finally {
      await provider.start();
    }
  });

  it("the provider is not called when auth or the body fails", async () => {
    expect((await classify(h.t, ["good"], bearer("alm_unknown"))).status).toBe(401);
    expect((await classify(h.t, [""], bearer(key))).status).toBe(400);
    expect(provider.calls).toHaveLength(0);
  });
});

describe("normaliseLabel", () => {
  it.each([
    ["POSITIVE", "positive"],
    ["LABEL_2", "positive"],
    ["pos", "positive"],
    ["Neutral", "neutral"],
    ["LABEL_1", "neutral"],
    ["NEGATIVE", "negative"],
    ["label_0", "negative"],
    ["4 stars", undefined],
  ])("%s → %s", (label, expected) => {
    expect(normaliseLabel(label)).toBe(expected);
  });
});
