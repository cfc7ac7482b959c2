import { afterEach, describe, expect, it, vi } from "vitest";
import { bearer, classify, PERMISSION, until } from "../helpers/key-stores.js";
import { classifierApp } from "./classifier-app.js";

/**
 * A call charged just before an hour ends whose job fails just after (502: its use is given
 * back) is taken out of the hour it was counted in. It was taken out of the next one: +1 in the
 * first hour, -1 in the next, so a day with no other call showed -1 on the account page's chart,
 * and 23 hours later GET /v1/usage said `last_24h: -1` for an hour.
 */
describe("a refund across the hour's end", () => {
  const app = classifierApp();
  afterEach(() => {
    vi.useRealTimers();
    app.provider().status = null;
    app.provider().release();
  });

  it("takes the call out of the hour it was counted in: no hour below zero", async () => {
    const [t, provider] = [app.t(), app.provider()];
    const { key, id } = await t.deps.keys.create({ name: "edge", permissions: [PERMISSION], remaining: 5 });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-26T23:59:59.800Z"));
    provider.gate();
    provider.status = 503;
    const call = Promise.resolve(classify(t, ["so good"], bearer(key)));
    await until(
      () => provider.calls.length,
      (n) => n > 0,
    );
    vi.setSystemTime(new Date("2026-11-27T00:00:00.300Z"));
    provider.release();
    expect((await call).status).toBe(502);
    await t.deps.keys.usage.flush();
    const rows = await t.deps.database.db
      .selectFrom("key_usage")
      .select(["hour", "count"])
      .where("key_id", "=", id)
      .orderBy("hour")
      .execute();
    expect(rows.filter((r) => Number(r.count) !== 0)).toEqual([]);
    const daily = await t.deps.keys.usage.daily([id], 2);
    expect(daily.perDay.get(id)).toEqual([0, 0]);
    vi.setSystemTime(new Date("2026-11-27T23:30:00Z")); // the first hour has left the 24 h window
    expect((await t.deps.keys.usage.counts([id])).get(id)?.last24h).toBe(0);
  });
});
