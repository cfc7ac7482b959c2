import { afterEach, describe, expect, it, vi } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl } from "../helpers/env.js";
import { bearer, classify, PERMISSION } from "../helpers/key-stores.js";

/**
 * A key expires at its `expires_at` exactly: served a millisecond before, refused (401) at that
 * instant, by the lookup that also spends (PostgreSQL) as by the one that does not (SQLite), and
 * nothing is spent for the refused call.
 */
const setups: [string, boolean][] = [["SQLite", false]];
if (DATABASE_URL) setups.push(["PostgreSQL", true]);

describe.each(setups)("expiry at the exact instant (%s)", (_name, postgres) => {
  let t: TestApp | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await t?.close();
    await drop?.();
  });

  it("200 a millisecond before expires_at, 401 at it, one use spent", async () => {
    const pg = postgres ? await freshPostgresUrl() : undefined;
    drop = pg?.drop;
    t = await testApp(pg ? { DATABASE_URL: pg.url } : {});
    const at = Date.parse("2030-01-01T00:00:00.000Z");
    const { key, id } = await t.deps.keys.create({
      name: "edge",
      permissions: [PERMISSION],
      remaining: 5,
      expiresAt: new Date(at).toISOString(),
    });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at - 60_000);
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(200); // the key's statement is chosen
    vi.setSystemTime(at - 1);
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(200);
    vi.setSystemTime(at);
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(401);
    vi.setSystemTime(at + 1);
    expect((await classify(t, ["so good"], bearer(key))).status).toBe(401);
    expect((await t.deps.keys.list()).find((k) => k.id === id)).toMatchObject({ remaining: 3, status: "expired" });
  });
});
