import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bearer, classify } from "./harness.js";

/** The statements one classify call sends to PostgreSQL: each as its text and, when prepared, its name. */
async function statementsOf(t: TestApp, headers: Record<string, string>) {
  const query = vi.spyOn(pg.Client.prototype, "query");
  try {
    const res = await classify(t, ["good"], headers);
    expect(res.status).toBe(200);
    return query.mock.calls.map(([q]) =>
      typeof q === "string" ? { text: q, name: undefined } : (q as { text: string; name?: string }),
    );
  } finally {
    query.mockRestore();
  }
}

describe.skipIf(!DATABASE_URL)(`classify's statements on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
  let t: TestApp;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const schema = await freshPostgresUrl();
    drop = schema.drop;
    t = await testApp({ DATABASE_URL: schema.url });
  });
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });

  it("the key lookup is a prepared statement: planned once per connection, then sent as its parameters", async () => {
    const key = await t.deps.keys.create({ name: "plain", permissions: ["vibe.classify"] });
    await statementsOf(t, bearer(key.key)); // its first call may also refresh last_used_at
    const sent = await statementsOf(t, bearer(key.key));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.text).toMatch(/"k"."key_hash" = \$1/);
    expect(sent[0]?.name).toMatch(/^almanac_[0-9a-f]{16}$/);
  });
});
