import { describe, expect, it } from "vitest";
import { accountApp, accountPage } from "../account/support.js";
import { errorOf } from "../helpers/app.js";
import { bearer, classify, PERMISSION } from "../helpers/key-stores.js";

const PUBLIC_URL = "http://localhost:8080";
const OPERATOR_KEY_MESSAGE =
  "This key was issued by the operator: its uses, rate limit, expiry and permissions are theirs to change. You can rename or revoke it.";

/**
 * A key the operator issued to an account (`almanac keys create --owner EMAIL --remaining …`) has
 * only the limits the operator gave it: its owner sees it on the account page, but cannot lift them.
 */
describe("an operator-issued key on its owner's account page", () => {
  const acct = accountApp(PUBLIC_URL);

  it("its uses, rate limit, expiry and permissions cannot be changed there (409 OPERATOR_KEY); its name can", async () => {
    const email = "operator-key@example.test";
    const agent = await acct.signIn(email);
    const ownerId = (await acct.t.deps.keys.accounts.plans.userIdFor(email)) as string;
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const trial = await acct.t.deps.keys.create({
      name: "trial",
      ownerId,
      permissions: [],
      expiresAt,
      remaining: 2,
      ratelimit: { limit: 5, durationSec: 60 },
    });
    const { csrf } = await accountPage(agent);
    const edits: Record<string, string>[] = [
      { remaining: "unlimited" },
      { remaining: "1000" },
      { ratelimit: "none" },
      { expires: "never" },
      { permissions_offered: "1", permission: PERMISSION },
    ];
    for (const edit of edits) {
      const res = await agent.post(`/account/keys/${trial.id}/update`, { csrf, ...edit });
      expect(res.status).toBe(409);
      expect((await errorOf(res)).error).toMatchObject({
        code: "conflict",
        reason: "OPERATOR_KEY",
        message: OPERATOR_KEY_MESSAGE,
      });
    }
    expect((await agent.post(`/account/keys/${trial.id}/update`, { csrf, name: "renamed" })).status).toBe(303);
    const after = (await acct.t.deps.keys.list(ownerId)).find((k) => k.id === trial.id);
    expect(after).toMatchObject({
      name: "renamed",
      remaining: 2,
      ratelimit: { limit: 5, durationSec: 60 },
      expiresAt,
      permissions: [],
    });
    expect((await classify(acct.t, ["good"], bearer(trial.key))).status).toBe(403);
  });

  it("with limits of its own it rolls there only without a grace period (at Unkey both keys would hold them)", async () => {
    const email = "operator-roll@example.test";
    const agent = await acct.signIn(email);
    const ownerId = (await acct.t.deps.keys.accounts.plans.userIdFor(email)) as string;
    const metered = await acct.t.deps.keys.create({
      name: "metered",
      ownerId,
      permissions: [PERMISSION],
      remaining: 3,
    });
    const { csrf } = await accountPage(agent);
    const graced = await agent.post(`/account/keys/${metered.id}/roll`, { csrf, grace: "604800" });
    expect(graced.status).toBe(409);
    expect((await errorOf(graced)).error).toMatchObject({
      code: "conflict",
      reason: "OPERATOR_KEY",
      message:
        "This key was issued by the operator with limits of its own: roll it without a grace period (the old key stops at once), or ask the operator.",
    });
    expect((await classify(acct.t, ["good"], bearer(metered.key))).status).toBe(200);
    expect((await agent.post(`/account/keys/${metered.id}/roll`, { csrf, grace: "0" })).status).toBe(303);
    expect((await classify(acct.t, ["good"], bearer(metered.key))).status).toBe(401);
    const replacement = (await acct.t.deps.keys.list(ownerId)).find((k) => k.replaces === metered.id);
    expect(replacement).toMatchObject({ remaining: 2, status: "active" });
  });
});
