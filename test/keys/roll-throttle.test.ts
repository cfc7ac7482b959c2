import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { bearer, classify, PERMISSION } from "../helpers/key-stores.js";

/**
 * A key rolled without a grace period (a leak) while the owner's servers still send it: each call
 * is a 401, and each spent a point of the per-address throttle of rejected keys, so after 20 the
 * address got 429 INVALID_KEY_LIMIT for 10 minutes — for the old key and for its replacement.
 */
describe("a fleet still on a key just rolled for a leak", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it("is told 401 for the old key, and is not locked out of its replacement", async () => {
    const old = await t.deps.keys.create({ name: "leaked", permissions: [PERMISSION] });
    expect((await classify(t, ["so good"], bearer(old.key))).status).toBe(200);
    const fresh = await t.deps.keys.roll(old.id, undefined, { graceSec: 0 });
    if (!fresh) throw new Error("roll");
    const olds = [];
    for (let i = 0; i < 25; i++) olds.push((await classify(t, ["so good"], bearer(old.key))).status);
    expect(olds.filter((s) => s !== 401)).toEqual([]);
    const res = await classify(t, ["so good"], bearer(fresh.key));
    expect([res.status, await res.text()]).toEqual([200, expect.any(String)]);
  });
});
