import pino from "pino";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { tempDir } from "../helpers/env.js";

describe("the migration to one free allowance per mailbox", () => {
  it("free accounts of one mailbox move to its pool with the fewest uses any had left; a paid account keeps its own", async () => {
    const database = openDatabase({ dataDir: tempDir(), logger: pino({ level: "silent" }) });
    const db = database.db;
    try {
      await migrate(db);
      // The database as it was before: no pool column, accounts with allowances of their own.
      await db
        .deleteFrom("kysely_migration" as never)
        .where("name" as never, "=", "033_key_ledger_pool" as never)
        .execute();
      await db.schema.alterTable("key_ledger").dropColumn("pool").execute();
      await db.schema.createTable("auth_user").addColumn("id", "text").addColumn("email", "text").execute();
      const accounts = [
        { id: "u1", email: "Jo.Doe+a@gmail.com", plan: "free", remaining: 80 },
        { id: "u2", email: "jodoe@googlemail.com", plan: "free", remaining: 30 },
        { id: "u3", email: "jodoe+paid@gmail.com", plan: "pro", remaining: 500 },
        { id: "u4", email: "other@example.test", plan: "free", remaining: 70 },
      ];
      const at = new Date().toISOString();
      for (const a of accounts) {
        await db
          .insertInto("auth_user" as never)
          .values({ id: a.id, email: a.email } as never)
          .execute();
        await db
          .insertInto("key_ledger" as never)
          .values({
            id: `l_${a.id}`,
            key_id: `k_${a.id}`,
            owner_id: a.id,
            name: "k",
            plan: a.plan,
            created_at: at,
          } as never)
          .execute();
        await db
          .insertInto("account_quotas")
          .values({ owner_id: a.id, remaining: a.remaining, updated_at: at })
          .execute();
      }
      expect(await migrate(db)).toEqual(["033_key_ledger_pool"]);
      const pools = await db.selectFrom("key_ledger").select(["owner_id", "pool"]).orderBy("owner_id").execute();
      expect(pools).toEqual([
        { owner_id: "u1", pool: "mailbox:jodoe@gmail.com" },
        { owner_id: "u2", pool: "mailbox:jodoe@gmail.com" },
        { owner_id: "u3", pool: "u3" },
        { owner_id: "u4", pool: "mailbox:other@example.test" },
      ]);
      const left = await db
        .selectFrom("account_quotas")
        .select(["owner_id", "remaining"])
        .orderBy("owner_id")
        .execute();
      expect(left.filter((r) => r.owner_id.startsWith("mailbox:"))).toEqual([
        { owner_id: "mailbox:jodoe@gmail.com", remaining: 30 },
        { owner_id: "mailbox:other@example.test", remaining: 70 },
      ]);
    } finally {
      await database.close();
    }
  });
});
