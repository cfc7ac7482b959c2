import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedKeyStore } from "../../src/adapters/keys/embedded.js";
import { MemoryRateLimiter } from "../../src/adapters/memory-limiter.js";
import { type Database, openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { AccountQuotas } from "../../src/features/keys/account-quota.js";
import { PLANS } from "../../src/features/keys/plans.js";
import { Pooled } from "../../src/features/keys/pooled.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../helpers/env.js";

const logger = pino({ level: "silent" });

/**
 * The embedded store spends an account-page key's pool itself, with the key's own uses, on both
 * dialects; the account layer over it spends nothing more, and a refused call keeps nothing.
 */
function suite(open: () => Promise<{ database: Database; drop: () => Promise<void> }>) {
  let database: Database;
  let drop: () => Promise<void>;
  let quotas: AccountQuotas;
  let store: EmbeddedKeyStore;
  let pooled: Pooled;
  let n = 0;
  beforeAll(async () => {
    ({ database, drop } = await open());
    await migrate(database.db);
    quotas = new AccountQuotas(database.db);
    store = new EmbeddedKeyStore(database.db, new MemoryRateLimiter(), quotas);
    pooled = new Pooled(quotas, new MemoryRateLimiter(), store);
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  /** An account-page key of a pro account whose pool has `uses` left (opened, or not yet when `uses` is undefined). */
  async function accountKey(uses?: number, remaining: number | null = null) {
    const ownerId = `user_${++n}`;
    const created = await store.create({ name: "k", ownerId, permissions: ["vibe.classify"], remaining });
    await database.db
      .insertInto("key_ledger")
      .values({
        id: `res_${n}`,
        key_id: created.id,
        owner_id: ownerId,
        name: "k",
        plan: "pro",
        created_at: new Date().toISOString(),
        expires_at: null,
        revoked_at: null,
        rolled_at: null,
        pool: ownerId,
      })
      .execute();
    if (uses !== undefined) {
      await quotas.open(ownerId, PLANS.pro);
      await database.db
        .updateTable("account_quotas")
        .set({ remaining: uses })
        .where("owner_id", "=", ownerId)
        .execute();
    }
    return { ...created, ownerId };
  }

  it("a charged call spends the pool once, in the store (account.spent), twice in a row (the statement warmed)", async () => {
    const k = await accountKey(5, 10);
    for (const left of [4, 3]) {
      expect(await store.verify(k.key, "vibe.classify")).toMatchObject({
        code: "VALID",
        account: { spent: true, remaining: left },
      });
    }
    expect(await pooled.verify(k.key, "vibe.classify")).toMatchObject({ code: "VALID", remaining: 2 });
    expect(await quotas.remaining(k.ownerId)).toBe(2);
    expect((await store.list(k.ownerId))[0]?.remaining).toBe(7);
  });

  it("a pool not opened yet is opened with its plan's uses and spent by the store", async () => {
    const k = await accountKey();
    expect(await pooled.verify(k.key, "vibe.classify")).toMatchObject({ code: "VALID" });
    expect(await quotas.remaining(k.ownerId)).toBe((PLANS.pro.quota as number) - 1);
  });

  it("an empty pool: USAGE_EXCEEDED, and the key's own use goes back", async () => {
    const k = await accountKey(0, 3);
    expect(await pooled.verify(k.key, "vibe.classify")).toMatchObject({ code: "USAGE_EXCEEDED" });
    expect(await quotas.remaining(k.ownerId)).toBe(0);
    expect((await store.list(k.ownerId))[0]?.remaining).toBe(3);
  });

  it("a refused key (revoked) keeps nothing of its pool, on the first call and the warmed one", async () => {
    const k = await accountKey(5, 10);
    expect(await pooled.verify(k.key, "vibe.classify")).toMatchObject({ code: "VALID" });
    await store.revoke(k.id);
    for (let i = 0; i < 2; i++) expect(await pooled.verify(k.key, "vibe.classify")).toMatchObject({ code: "DISABLED" });
    expect(await quotas.remaining(k.ownerId)).toBe(4);
    expect((await store.list(k.ownerId))[0]?.remaining).toBe(9);
  });
}

describe("Pooled over the embedded store on SQLite", () => {
  suite(async () => ({ database: openDatabase({ dataDir: tempDir(), logger }), drop: async () => {} }));
});

describe.skipIf(!DATABASE_URL)(
  `Pooled over the embedded store on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`,
  () => {
    suite(async () => {
      const pg = await freshPostgresUrl();
      return { database: openDatabase({ dataDir: "", databaseUrl: pg.url, logger }), drop: pg.drop };
    });
  },
);
