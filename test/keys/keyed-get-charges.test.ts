import { describe, expect, it } from "vitest";
import { testApp } from "../helpers/app.js";
import { bearer, PERMISSION, remainingOf } from "../helpers/key-stores.js";
import { expectValue } from "../helpers/result.js";

/** GETs a keyed caller may send: one answered, then refusals of the request itself. */
const ANSWERED = "/v1/holidays?country=GB&year=2024";
const REFUSED = [
  ["/v1/vibe/classify", 405],
  ["/v1/no-such-lookup", 404],
  ["/v1/vat", 400],
] as const;

describe("a keyed GET spends a use only when it is answered", () => {
  it("405, an unknown path and a missing parameter give the use back and are not counted; a 200 is charged", async () => {
    const t = await testApp();
    try {
      const operator = await t.deps.keys.create({ name: "op", permissions: [PERMISSION], remaining: 10 });
      const ak = t.deps.keys.accounts;
      const email = `keyed-get-${Date.now()}@example.test`;
      const ownerId = `user_${Date.now()}`;
      const account = expectValue(await ak.create({ ownerId, email, name: "a", permissions: [], expiresAt: null }));
      const pool = await ak.poolOfAccount(ownerId, email);
      const before = await ak.quotas.remaining(pool);
      for (const key of [operator.key, account.key]) {
        for (const [path, status] of REFUSED)
          expect((await t.app.request(path, { headers: bearer(key) })).status).toBe(status);
        expect((await t.app.request(ANSWERED, { headers: bearer(key) })).status).toBe(200);
      }
      expect(await remainingOf(t.deps.keys, operator.id)).toBe(9);
      expect(await ak.quotas.remaining(pool)).toBe((before as number) - 1);
      for (const key of [operator.key, account.key]) {
        const usage = await (await t.app.request("/v1/usage", { headers: bearer(key) })).json();
        expect(usage).toMatchObject({ requests: { last_24h: 1 } });
      }
    } finally {
      await t.close();
    }
  });
});
