import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyRefusalError, keyRefusalMessage } from "../../src/features/keys/index.js";
import type { KeyRefusal } from "../../src/features/keys/refusals.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { expectValue } from "../helpers/result.js";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe("AccountKeys returns its refusals as values", () => {
  it("create over the plan's caps, roll and update of a missing key, edits beyond the plan", async () => {
    const ak = t.deps.keys.accounts;
    const owner = { ownerId: "user_values", email: "values@example.test", permissions: [], expiresAt: null };
    const first = expectValue(await ak.create({ ...owner, name: "one" }));
    expect(await ak.create({ ...owner, name: "ONE" })).toEqual({ ok: false, error: { kind: "duplicate_name" } });
    expectValue(await ak.create({ ...owner, name: "two" }));
    expect(await ak.create({ ...owner, name: "three" })).toEqual({
      ok: false,
      error: { kind: "key_limit", plan: "free", limit: 2 },
    });

    expect(await ak.roll(owner.ownerId, "key_missing", 0)).toEqual({ ok: false, error: { kind: "not_found" } });
    expect(await ak.update(owner.ownerId, "key_missing", { name: "x" })).toEqual({
      ok: false,
      error: { kind: "not_found" },
    });
    expect(await ak.update("someone_else", first.id, { name: "x" })).toEqual({
      ok: false,
      error: { kind: "not_found" },
    });
    expect(await ak.update(owner.ownerId, first.id, { expiresAt: "2001-01-01T00:00:00.000Z" })).toEqual({
      ok: false,
      error: { kind: "expiry_in_past" },
    });
    expect(await ak.update(owner.ownerId, first.id, { remaining: 101 })).toEqual({
      ok: false,
      error: { kind: "plan_limit", plan: "free", allows: "100 uses" },
    });
    expect(await ak.update(owner.ownerId, first.id, { name: "Two" })).toEqual({
      ok: false,
      error: { kind: "duplicate_name" },
    });

    const rolled = expectValue(await ak.roll(owner.ownerId, first.id, 3600));
    expect(await ak.update(owner.ownerId, first.id, { expiresAt: "2099-01-01T00:00:00.000Z" })).toEqual({
      ok: false,
      error: { kind: "rolled" },
    });
    const again = await ak.roll(owner.ownerId, rolled.id, 3600);
    expect(again.ok || again.error.kind).toBe("roll_in_progress");
    expect(expectValue(await ak.update(owner.ownerId, rolled.id, { name: "renamed" })).name).toBe("renamed");
  });

  it("the account page's answers and the CLI's words are today's, byte for byte", () => {
    const cases: [Exclude<KeyRefusal, { kind: "not_found" }>, number, string, string | undefined, string][] = [
      [
        { kind: "duplicate_name" },
        409,
        "conflict",
        "DUPLICATE_NAME",
        "You already have an active key with this name: choose another name.",
      ],
      [
        { kind: "key_limit", plan: "free", limit: 2 },
        409,
        "conflict",
        "KEY_LIMIT",
        "The free plan allows 2 active keys: revoke one first, or upgrade your plan.",
      ],
      [
        { kind: "daily_limit", plan: "pro", limit: 20, retryAfterSec: 77 },
        429,
        "rate_limited",
        "KEY_CREATION_LIMIT",
        "The pro plan allows 20 new keys a day: try again later, or upgrade your plan.",
      ],
      [
        { kind: "roll_in_progress", previous: "alm_ab…wxyz" },
        409,
        "conflict",
        "ROLL_IN_PROGRESS",
        "A key this one replaced (alm_ab…wxyz) is still in its grace period: revoke it first, or roll without a grace period.",
      ],
      [
        { kind: "expiry_in_past" },
        400,
        "invalid_body",
        undefined,
        "The new expiry is in the past: choose a later time, or revoke the key.",
      ],
      [
        { kind: "plan_limit", plan: "pro", allows: "120 calls per 60 s" },
        409,
        "conflict",
        "PLAN_LIMIT",
        "The pro plan allows 120 calls per 60 s: choose less, or upgrade your plan.",
      ],
      [
        { kind: "rolled" },
        409,
        "conflict",
        "ROLLED",
        "This key was rolled and ends with its grace period: its expiry cannot change. Revoke it, or edit its replacement.",
      ],
    ];
    for (const [refusal, status, code, reason, message] of cases) {
      const err = keyRefusalError(refusal);
      expect([err.status, err.code, err.reason, err.message], refusal.kind).toEqual([status, code, reason, message]);
      expect(keyRefusalMessage(refusal)).toBe(message);
    }
    expect(keyRefusalError({ kind: "daily_limit", plan: "pro", limit: 20, retryAfterSec: 77 }).headers).toEqual({
      "Retry-After": "77",
    });
  });
});
