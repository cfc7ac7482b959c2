import { describe, expect, it } from "vitest";
import { AccountQuotas } from "../../src/features/keys/account-quota.js";
import { PLANS } from "../../src/features/keys/plans.js";
import { Pooled } from "../../src/features/keys/pooled.js";
import type { KeyVerification, KeyVerifier } from "../../src/ports/key-store.js";
import { testApp } from "../helpers/app.js";

describe("Pooled: a refused verdict gives back the account's uses its store spent", () => {
  it("the store spent the account's use with the key, then refused the call (DISABLED): the use goes back", async () => {
    const t = await testApp();
    try {
      const quotas = new AccountQuotas(t.deps.database.db);
      const ownerId = `user_${Date.now()}`;
      await quotas.open(ownerId, PLANS.pro);
      await t.deps.database.db
        .updateTable("account_quotas")
        .set({ remaining: 4 })
        .where("owner_id", "=", ownerId)
        .execute();
      // As the embedded store's one statement on PostgreSQL reports it: the account's use spent (5 → 4), the key refused.
      const refused: KeyVerification = {
        kind: "verdict",
        code: "DISABLED",
        keyId: "key_x",
        ownerId,
        remaining: null,
        account: { ownerId, pool: ownerId, plan: "pro", opened: true, remaining: 4, spent: true },
      };
      const inner: KeyVerifier = { verify: async () => refused, refund: async () => true };
      const store = new Pooled(quotas, t.deps.limiter, inner);
      expect(await store.verify("alm_x", "vibe.classify")).toMatchObject({ code: "DISABLED" });
      expect(await quotas.remaining(ownerId)).toBe(5);
      // A free check (cost 0) spent nothing, so nothing goes back.
      expect(await store.verify("alm_x", "vibe.classify", { cost: 0 })).toMatchObject({ code: "DISABLED" });
      expect(await quotas.remaining(ownerId)).toBe(5);
    } finally {
      await t.close();
    }
  });
});
