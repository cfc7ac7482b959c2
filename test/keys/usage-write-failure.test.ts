import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { bearer, classify, PERMISSION } from "../helpers/key-stores.js";

/**
 * A write of the usage counts that fails once (the database briefly unusable) must not stop
 * every later one: the chain of writes stayed rejected, so no count was written again until a
 * restart (and lost then), and `GET /v1/usage`, which writes them before reading, failed with
 * 500 for good.
 */
describe("usage counts after a failed write", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  const usage = (key: string) => t.app.request("/v1/usage", { headers: bearer(key) });

  it("the next write takes the kept counts: /v1/usage answers and counts every charged call", async () => {
    const { key } = await t.deps.keys.create({ name: "blip", permissions: [PERMISSION], remaining: 10 });
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(200);
    await sql`alter table key_usage rename to key_usage_away`.execute(t.deps.database.db);
    try {
      expect((await usage(key)).status).not.toBe(200); // its write fails while the table is away
    } finally {
      await sql`alter table key_usage_away rename to key_usage`.execute(t.deps.database.db);
    }
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(200);
    const res = await usage(key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { requests: { last_24h: number }; remaining_uses: number };
    expect({ requests: body.requests.last_24h, remaining: body.remaining_uses }).toEqual({ requests: 2, remaining: 8 });
  });
});
