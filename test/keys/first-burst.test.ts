import { describe, expect, it } from "vitest";
import { bearer, classify, PERMISSION, until } from "../helpers/key-stores.js";
import { classifierApp } from "./classifier-app.js";

/**
 * A new key's first calls, sent at once: the rejected-keys throttle has them wait for the first
 * one's verdict (so a guesser's copies cost one point). They waited for the first call's whole
 * job instead — its classifier answer, up to UPSTREAM_TIMEOUT_MS — so a new key's first burst
 * ran one call at a time (1 of 5 reached the classifier while it held its answer).
 */
describe("a new key's first burst", () => {
  const app = classifierApp();

  it("runs at once: every call reaches the classifier while the first one's answer is held", async () => {
    const [t, provider] = [app.t(), app.provider()];
    const { key } = await t.deps.keys.create({ name: "new", permissions: [PERMISSION], remaining: 10 });
    provider.gate();
    const calls = Array.from({ length: 5 }, (_, i) => Promise.resolve(classify(t, [`so good ${i}`], bearer(key))));
    expect(
      await until(
        () => provider.calls.length,
        (n) => n >= 5,
        3000,
      ),
    ).toBe(5);
    provider.release();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });
});
