import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REJECTED_KEY_MESSAGE } from "../../../src/http/key-auth.js";
import { FakeUnkey } from "../../fakes/unkey.js";
import { errorOf } from "../../helpers/app.js";
import { bearer, classify, type Harness, PERMISSION, unkeyHarness } from "../../helpers/key-stores.js";

let h: Harness;
beforeAll(async () => {
  h = await unkeyHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  const u = h.unkey;
  if (!u) throw new Error("unkey harness");
  u.calls.length = 0;
  u.fault = null;
  u.forceCode = null;
  u.redirectTo = null;
});

const unkey = () => h.unkey as NonNullable<Harness["unkey"]>;

describe("Unkey verdict codes → HTTP (every code of v2 keys.verifyKey)", () => {
  it.each([
    ["VALID", 200, undefined, undefined],
    ["NOT_FOUND", 401, "unauthorized", "INVALID"],
    ["EXPIRED", 401, "unauthorized", "INVALID"],
    ["DISABLED", 401, "unauthorized", "INVALID"],
    ["FORBIDDEN", 403, "forbidden", undefined],
    ["INSUFFICIENT_PERMISSIONS", 403, "forbidden", undefined],
    ["RATE_LIMITED", 429, "rate_limited", "RATE_LIMITED"],
    ["USAGE_EXCEEDED", 429, "rate_limited", "USAGE_EXCEEDED"],
    ["INSUFFICIENT_CREDITS", 429, "rate_limited", "USAGE_EXCEEDED"],
    ["SOMETHING_NEW", 503, "unkey_unavailable", undefined],
  ])("%s → %i %s %s", async (code, status, errorCode, reason) => {
    unkey().forceCode = code;
    const res = await classify(h.t, ["good"], bearer("alm_anykey"));
    expect(res.status).toBe(status);
    if (errorCode) {
      const { error } = await errorOf(res);
      expect(error.code).toBe(errorCode);
      expect(error.reason).toBe(reason);
      if (status === 401) expect(error.message).toBe(REJECTED_KEY_MESSAGE);
    }
    expect(unkey().verifyCalls).toHaveLength(1);
  });
});

describe("Unkey down, slow or garbled → 503 unkey_unavailable, never a pass or a rejection", () => {
  it.each(["500", "garbage", "malformed", "hang", "reset"] as const)("fault %s", async (fault) => {
    const { key } = await h.keys.create({ name: "f", permissions: [PERMISSION] });
    unkey().calls.length = 0;
    unkey().fault = fault;
    const res = await classify(h.t, ["good"], bearer(key));
    expect(res.status).toBe(503);
    const { error } = await errorOf(res);
    expect(error.code).toBe("unkey_unavailable");
    expect(res.headers.get("retry-after")).toBe("2");
    // One attempt: a retry is only made when no connection was established.
    expect(unkey().verifyCalls).toHaveLength(1);
  });

  it("a wrong root key (Unkey answers 401) is a server problem: 503, not the client's 401", async () => {
    const other = await unkeyHarness({ UNKEY_ROOT_KEY: "unkey_wrong" });
    try {
      const res = await classify(other.t, ["good"], bearer("alm_x"));
      expect(res.status).toBe(503);
      expect(other.unkey?.verifyCalls[0]?.authorization).toBe("Bearer unkey_wrong");
    } finally {
      await other.close();
    }
  });

  it("refused connections → 503; back up → 200", async () => {
    const { key } = await h.keys.create({ name: "r", permissions: [PERMISSION] });
    await h.down();
    try {
      expect((await classify(h.t, ["good"], bearer(key))).status).toBe(503);
    } finally {
      await h.up();
    }
    expect((await classify(h.t, ["good"], bearer(key))).status).toBe(200);
  });
});

describe("a redirect from Unkey is never followed: the key goes nowhere else", () => {
  it("a 307 to another server (which would accept the key) → 503 unkey_unavailable; that server is never called", async () => {
    const { key } = await h.keys.create({ name: "redirected", permissions: [PERMISSION] });
    // The target knows the key and the root key: following the redirect would get a 200.
    const target = await new FakeUnkey(unkey().rootKey, unkey().apiId).start();
    for (const [id, k] of unkey().keys) target.keys.set(id, { ...k });
    unkey().calls.length = 0;
    unkey().redirectTo = target.url;
    try {
      const res = await classify(h.t, ["good"], bearer(key));
      expect(res.status).toBe(503);
      expect((await errorOf(res)).error.code).toBe("unkey_unavailable");
      expect(target.calls).toEqual([]);
      // Management calls refuse the redirect too.
      await expect(h.keys.list()).rejects.toThrow(/redirected with 307/);
      expect(unkey().calls.map((c) => c.path)).toEqual(["/v2/keys.verifyKey", "/v2/apis.listKeys"]);
      expect(target.calls).toEqual([]);
    } finally {
      await target.close();
    }
  });
});

describe("Unkey requests", () => {
  it("send the root key, the key and the permission; an idempotent replay sends credits.cost 0", async () => {
    const { key } = await h.keys.create({ name: "c", permissions: [PERMISSION], remaining: 5 });
    unkey().calls.length = 0;
    const headers = { ...bearer(key), "Idempotency-Key": "u-1" };
    expect((await classify(h.t, ["good"], headers)).status).toBe(200);
    expect((await classify(h.t, ["good"], headers)).headers.get("idempotent-replayed")).toBe("true");
    const [first, second] = unkey().verifyCalls;
    expect(first?.authorization).toBe(`Bearer ${unkey().rootKey}`);
    expect(first?.body).toEqual({ key, permissions: PERMISSION });
    expect(second?.body).toEqual({ key, permissions: PERMISSION, credits: { cost: 0 } });
    expect((await h.keys.list()).find((k) => k.prefix === key.slice(0, 8))?.remaining).toBe(4);
  });

  it("credit increments the key's credits with keys.updateCredits; an unlimited key is left alone", async () => {
    const limited = await h.keys.create({ name: "r", permissions: [PERMISSION], remaining: 3 });
    const unlimited = await h.keys.create({ name: "u", permissions: [PERMISSION] });
    unkey().calls.length = 0;
    expect(await h.keys.refund(limited.id, 2)).toBe(true);
    expect(
      unkey()
        .callsTo("/v2/keys.updateCredits")
        .map((c) => c.body),
    ).toEqual([{ keyId: limited.id, operation: "increment", value: 2 }]);
    expect(await h.keys.refund(unlimited.id, 1)).toBe(true);
    expect(await h.keys.refund("key_missing", 1)).toBe(false);
    expect(unkey().callsTo("/v2/keys.updateCredits")).toHaveLength(1);
    const remaining = Object.fromEntries((await h.keys.list()).map((k) => [k.id, k.remaining]));
    expect([remaining[limited.id], remaining[unlimited.id]]).toEqual([5, null]);
  });
});

describe("Unkey key management", () => {
  it("a roll with a grace period: the replacement keeps the old key's own expiry, the old key gets the grace end", async () => {
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const old = await h.keys.create({ name: "r", permissions: [PERMISSION], expiresAt });
    const fresh = await h.keys.roll(old.id, undefined, { graceSec: 60 });
    expect(fresh).toMatchObject({ expiresAt, replaces: old.id });
    const stored = unkey().keys.get(fresh?.id ?? "");
    expect(stored?.expires).toBe(Date.parse(expiresAt));
    expect(stored?.meta).toMatchObject({ replaces: old.id });
    expect(unkey().keys.get(old.id)?.expires).toBeLessThanOrEqual(Date.now() + 60_000);
    expect((await h.keys.list()).find((k) => k.id === fresh?.id)?.replaces).toBe(old.id);
    expect(await h.keys.roll(old.id, undefined, { graceSec: 60 })).toBeNull(); // a key rolls once
  });

  it("update sends keys.updateKey with only the fields that change (null clears), as V2KeysUpdateKeyRequestBody", async () => {
    const k = await h.keys.create({ name: "u", permissions: [PERMISSION], remaining: 5 });
    unkey().calls.length = 0;
    const updated = await h.keys.update(k.id, {
      name: "renamed",
      remaining: null,
      ratelimit: { limit: 3, durationSec: 10 },
    });
    expect(
      unkey()
        .callsTo("/v2/keys.updateKey")
        .map((c) => c.body),
    ).toEqual([
      {
        keyId: k.id,
        name: "renamed",
        credits: null,
        ratelimits: [{ name: "requests", limit: 3, duration: 10_000, autoApply: true }],
      },
    ]);
    expect(updated).toMatchObject({ name: "renamed", remaining: null, ratelimit: { limit: 3, durationSec: 10 } });
    const cleared = await h.keys.update(k.id, { expiresAt: null, ratelimit: null, permissions: [] });
    expect(unkey().callsTo("/v2/keys.updateKey").at(-1)?.body).toEqual({
      keyId: k.id,
      expires: null,
      permissions: [],
      ratelimits: null,
    });
    expect(cleared).toMatchObject({ expiresAt: null, ratelimit: null, permissions: [] });
    expect(await h.keys.update("key_doesNotExist", { name: "x" })).toBeNull();
  });

  it("the fake refuses an updateKey body outside the published schema (so the adapter's shape is checked)", async () => {
    const k = await h.keys.create({ name: "s", permissions: [] });
    const res = await fetch(`${unkey().url}/v2/keys.updateKey`, {
      method: "POST",
      headers: { Authorization: `Bearer ${unkey().rootKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ keyId: k.id, remaining: 5 }),
    });
    expect(res.status).toBe(400);
  });
});
