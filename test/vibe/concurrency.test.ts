import { describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bearer, classify, PERMISSION } from "../helpers/key-stores.js";

/** 50 parallel calls with a key of 10 uses, spread over `apps`: exactly 10 succeed, the rest are USAGE_EXCEEDED. */
async function race(apps: TestApp[]) {
  const first = apps[0] as TestApp;
  const { key, id } = await first.deps.keys.create({ name: "race", permissions: [PERMISSION], remaining: 10 });
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) => classify(apps[i % apps.length] as TestApp, ["good"], bearer(key))),
  );
  const statuses = responses.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(10);
  expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  const reasons = await Promise.all(
    responses
      .filter((r) => r.status === 429)
      .map(async (r) => ((await r.json()) as { error: { reason: string } }).error.reason),
  );
  expect(new Set(reasons)).toEqual(new Set(["USAGE_EXCEEDED"]));
  expect((await first.deps.keys.list()).find((k) => k.id === id)).toMatchObject({ remaining: 0, status: "exhausted" });
}

describe("remaining uses under concurrency", () => {
  it("SQLite: 50 parallel calls, 10 uses → exactly 10 successes", async () => {
    const t = await testApp();
    try {
      await race([t]);
    } finally {
      await t.close();
    }
  });

  describe.skipIf(!DATABASE_URL)(`PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
    it("two instances on one database: 50 parallel calls, 10 uses → exactly 10 successes", async () => {
      const pg = await freshPostgresUrl();
      const a = await testApp({ DATABASE_URL: pg.url });
      const b = await testApp({ DATABASE_URL: pg.url });
      try {
        await race([a, b]);
      } finally {
        await a.close();
        await b.close();
        await pg.drop();
      }
    });
  });
});
