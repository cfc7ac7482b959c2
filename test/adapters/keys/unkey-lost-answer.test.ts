import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { errorOf } from "../../helpers/app.js";
import {
  bearer,
  classify,
  type Harness,
  PERMISSION,
  remainingOf,
  unkeyHarness,
  until,
} from "../../helpers/key-stores.js";

/**
 * A verification Unkey made (its credit spent) whose answer was lost on the way back: a timeout,
 * a reset connection, a garbled body. The call is a 503 and nobody is served, so the credit goes
 * back; an Idempotency-Key retry was charged a second time (3 of 5 left for one call served).
 */
let h: Harness;
beforeAll(async () => {
  h = await unkeyHarness({ UNKEY_TIMEOUT_MS: "600" });
});
afterAll(() => h.close());
const unkey = () => h.unkey as NonNullable<Harness["unkey"]>;
beforeEach(() => {
  unkey().calls.length = 0;
  unkey().fault = null;
  unkey().faultAfter = null;
  unkey().faultAfterPath = "/v2/keys.verifyKey";
});
const remaining = (id: string, n: number) =>
  until(
    () => remainingOf(h.keys, id),
    (r) => r === n,
    5000,
  );

describe("Unkey spent the credit, its answer was lost", () => {
  it.each(["hang", "reset", "garbage"] as const)(
    "%s: 503, the credit comes back; the Idempotency-Key retry is charged once",
    async (fault) => {
      const { key, id } = await h.keys.create({ name: `lost-${fault}`, permissions: [PERMISSION], remaining: 5 });
      const idem = { ...bearer(key), "Idempotency-Key": `lost-${fault}` };
      unkey().faultAfter = fault;
      const first = await classify(h.t, ["so good"], idem);
      expect(first.status).toBe(503);
      expect((await errorOf(first)).error.code).toBe("unkey_unavailable");
      unkey().faultAfter = null;
      expect(await remaining(id, 5)).toBe(5);
      const retry = await classify(h.t, ["so good"], idem);
      expect(retry.status).toBe(200);
      expect(await remaining(id, 4)).toBe(4);
    },
  );

  it("without an Idempotency-Key: 503 and the credit back, then a call is charged once", async () => {
    const { key, id } = await h.keys.create({ name: "lost-plain", permissions: [PERMISSION], remaining: 2 });
    unkey().faultAfter = "reset";
    expect((await classify(h.t, ["so good"], bearer(key))).status).toBe(503);
    unkey().faultAfter = null;
    expect(await remaining(id, 2)).toBe(2);
    expect((await classify(h.t, ["so good"], bearer(key))).status).toBe(200);
    expect(await remainingOf(h.keys, id)).toBe(1);
  });

  it("a key without credits of its own (an account key at Unkey) has nothing to give back", async () => {
    const { key } = await h.keys.create({ name: "lost-unlimited", permissions: [PERMISSION] });
    unkey().faultAfter = "reset";
    expect((await classify(h.t, ["so good"], bearer(key))).status).toBe(503);
    unkey().faultAfter = null;
    await until(
      () => unkey().callsTo("/v2/keys.whoami").length,
      (n) => n > 0,
      5000,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(unkey().callsTo("/v2/keys.updateCredits")).toHaveLength(0);
    await h.unkey?.refuse(); // no connection at all: nothing was sent
    try {
      expect((await classify(h.t, ["so good"], bearer(key))).status).toBe(503);
    } finally {
      await h.unkey?.start();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(unkey().callsTo("/v2/keys.whoami")).toHaveLength(1);
  });

  it("a gateway's 5xx page instead of Unkey's answer counts as lost: the credit comes back", async () => {
    const { key, id } = await h.keys.create({ name: "lost-502", permissions: [PERMISSION], remaining: 3 });
    unkey().faultAfter = "500";
    expect((await classify(h.t, ["so good"], bearer(key))).status).toBe(503);
    unkey().faultAfter = null;
    expect(await remaining(id, 3)).toBe(3);
  });
});
