import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedKeyStore } from "../../../src/adapters/keys/embedded.js";
import { hashKey } from "../../../src/adapters/keys/material.js";
import { MemoryRateLimiter } from "../../../src/adapters/memory-limiter.js";
import { type Database, openDatabase } from "../../../src/db/database.js";
import { SqlIdempotencyStore } from "../../../src/db/idempotency.js";
import { migrate } from "../../../src/db/migrations.js";
import { AccountQuotas } from "../../../src/features/keys/account-quota.js";
import type { IdempotencyRef } from "../../../src/ports/idempotency.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../../helpers/env.js";

const logger = pino({ level: "silent" });

/** The account page's operations (by owner) and the stored form, on both dialects. */
function suite(open: () => Promise<{ database: Database; drop: () => Promise<void> }>) {
  let database: Database;
  let drop: () => Promise<void>;
  let store: EmbeddedKeyStore;
  beforeAll(async () => {
    ({ database, drop } = await open());
    await migrate(database.db);
    store = new EmbeddedKeyStore(database.db, new MemoryRateLimiter(), new AccountQuotas(database.db));
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  it("stores only the SHA-256 of the key, and the display parts", async () => {
    const created = await store.create({ name: "k", ownerId: "u1", permissions: ["vibe.classify"] });
    const row = await database.db
      .selectFrom("api_keys")
      .selectAll()
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashKey(created.key));
    expect(JSON.stringify(row)).not.toContain(created.key);
    expect(row.start).toBe(created.key.slice(0, 8));
    expect(row.last4).toBe(created.key.slice(-4));
  });

  it("lists, revokes and rolls by owner; another owner's key is as if it did not exist", async () => {
    const mine = await store.create({ name: "mine", ownerId: "alice", permissions: ["vibe.classify"], remaining: 7 });
    const theirs = await store.create({ name: "theirs", ownerId: "bob", permissions: ["vibe.classify"] });
    expect((await store.list("alice")).map((k) => k.id)).toEqual([mine.id]);
    expect(await store.revoke(theirs.id, "alice")).toBe(false);
    expect(await store.roll(theirs.id, "alice")).toBeNull();
    expect(await store.verify(theirs.key, "vibe.classify")).toMatchObject({ code: "VALID" });

    const rolled = await store.roll(mine.id, "alice");
    expect(rolled).toMatchObject({ name: "mine", ownerId: "alice", remaining: 7, status: "active" });
    expect(await store.verify(mine.key)).toMatchObject({ code: "DISABLED" });
    expect(await store.verify(rolled?.key ?? "")).toMatchObject({ code: "VALID", ownerId: "alice", remaining: 6 });
    expect(await store.roll(mine.id, "alice")).toBeNull();
    const statuses = Object.fromEntries((await store.list("alice")).map((k) => [k.id, k.status]));
    expect(statuses).toEqual({ [mine.id]: "revoked", [rolled?.id ?? ""]: "active" });
    expect(await store.revoke(mine.id, "alice")).toBe(true);
  });

  it("a charge made for an Idempotency-Key claim is recorded on the claim with its spend, and only on a claim still held", async () => {
    const claims = new SqlIdempotencyStore(database.db);
    const chargedOn = async (ref: IdempotencyRef) =>
      (
        await database.db
          .selectFrom("idempotency")
          .select("charged")
          .where("scope", "=", ref.scope)
          .where("key", "=", ref.key)
          .executeTakeFirstOrThrow()
      ).charged;
    const hold = async (ref: IdempotencyRef) => {
      const held = await claims.claim(ref, "body", 30_000);
      if (held.kind !== "owned") throw new Error(`claim not owned: ${held.kind}`);
      return { ...ref, owner: held.owner };
    };
    // Spent in the lookup's statement (PostgreSQL), and apart from it (a rate limit of its own; SQLite).
    for (const limits of [{}, { ratelimit: { limit: 100, durationSec: 60 } }]) {
      const k = await store.create({ name: "idem", permissions: [], remaining: 2, ...limits });
      const first = await hold({ scope: `s-${k.id}`, key: "first" });
      expect(await store.verify(k.key, undefined, { claim: first })).toMatchObject({
        code: "VALID",
        remaining: 1,
        claimCharged: true,
      });
      expect(await chargedOn(first)).toBe(1);
      // A claim taken over meanwhile: the use is spent all the same, nothing is recorded on it.
      const second = await hold({ scope: `s-${k.id}`, key: "second" });
      const verdict = await store.verify(k.key, undefined, { claim: { ...second, owner: "taken-over" } });
      expect(verdict).toMatchObject({ code: "VALID", remaining: 0, claimCharged: false });
      expect(await chargedOn(second)).toBe(0);
      // Refused (out of uses), or free: nothing recorded.
      expect(await store.verify(k.key, undefined, { claim: second })).toMatchObject({ code: "USAGE_EXCEEDED" });
      expect(await store.verify(k.key, undefined, { cost: 0, claim: second })).not.toHaveProperty("claimCharged");
      expect(await chargedOn(second)).toBe(0);
      // A call refused after its charge (the account's rate limit): the refund naming its claim
      // gives the use back and clears the record together.
      const third = await hold({ scope: `s-${k.id}`, key: "third" });
      await store.update(k.id, { remaining: 1 });
      expect(await store.verify(k.key, undefined, { claim: third })).toMatchObject({ claimCharged: true });
      expect(await chargedOn(third)).toBe(1);
      // Once the claim is another request's, it relies on that charge: nothing is given back.
      expect(await store.refund(k.id, 1, { claim: { ...third, owner: "taken-over" } })).toBe(false);
      expect(await chargedOn(third)).toBe(1);
      expect(await store.refund(k.id, 1, { claim: third })).toBe(true);
      expect([await chargedOn(third), (await store.list(undefined)).find((x) => x.id === k.id)?.remaining]).toEqual([
        0, 1,
      ]);
    }
  });

  it("a roll with a grace period: the replacement keeps the old key's own expiry and outlives the grace end", async () => {
    let clock = Date.now();
    const timed = new EmbeddedKeyStore(
      database.db,
      new MemoryRateLimiter(),
      new AccountQuotas(database.db),
      () => new Date(clock),
    );
    const forever = await timed.create({ name: "forever", ownerId: "carol", permissions: [] });
    const rolled = await timed.roll(forever.id, "carol", { graceSec: 60 });
    expect(rolled).toMatchObject({ expiresAt: null, replaces: forever.id });
    const dated = await timed.create({
      name: "dated",
      permissions: [],
      expiresAt: new Date(clock + 86_400_000).toISOString(),
    });
    const datedNext = await timed.roll(dated.id, undefined, { graceSec: 60 });
    expect(datedNext?.expiresAt).toBe(dated.expiresAt);
    clock += 61_000; // the grace period is over
    expect(await timed.verify(forever.key)).toMatchObject({ code: "EXPIRED" });
    expect(await timed.verify(rolled?.key ?? "")).toMatchObject({ code: "VALID" });
    expect(await timed.verify(datedNext?.key ?? "")).toMatchObject({ code: "VALID" });
  });

  it("the old and new key of a roll share one count of uses and one rate limit; a key rolls once", async () => {
    const old = await store.create({
      name: "shared",
      permissions: [],
      remaining: 5,
      ratelimit: { limit: 3, durationSec: 60 },
    });
    const fresh = await store.roll(old.id, undefined, { graceSec: 3600 });
    expect(fresh).toMatchObject({ remaining: 5, ratelimit: { limit: 3, durationSec: 60 } });
    expect(await store.verify(old.key)).toMatchObject({ code: "VALID", remaining: 4 });
    expect(await store.verify(fresh?.key ?? "")).toMatchObject({ code: "VALID", remaining: 3 });
    expect(await store.verify(old.key)).toMatchObject({ code: "VALID", remaining: 2 });
    expect(await store.verify(fresh?.key ?? "")).toMatchObject({ code: "RATE_LIMITED" }); // 4th call, limit 3
    expect(await store.roll(old.id, undefined, { graceSec: 3600 })).toBeNull(); // rolled already
    const listed = (await store.list(null)).filter((k) => k.name === "shared");
    expect(listed.map((k) => k.remaining)).toEqual([2, 2]);
  });

  it("update changes only the fields given; uses and rate limit for both keys of a roll; by owner", async () => {
    const k = await store.create({ name: "edit", ownerId: "dave", permissions: ["vibe.classify"], remaining: 9 });
    const next = await store.roll(k.id, "dave", { graceSec: 3600 });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    expect(await store.update(k.id, { name: "x" }, "erin")).toBeNull();
    const updated = await store.update(next?.id ?? "", {
      name: "edited",
      expiresAt,
      permissions: [],
      remaining: 2,
      ratelimit: { limit: 1, durationSec: 60 },
    });
    expect(updated).toMatchObject({
      name: "edited",
      expiresAt,
      permissions: [],
      remaining: 2,
      ratelimit: { limit: 1, durationSec: 60 },
    });
    expect((await store.list("dave")).find((x) => x.id === k.id)).toMatchObject({ name: "edit", remaining: 2 });
    expect(await store.verify(next?.key ?? "", "vibe.classify")).toMatchObject({ code: "INSUFFICIENT_PERMISSIONS" });
    expect(await store.update(k.id, { remaining: null, ratelimit: null }, "dave")).toMatchObject({
      name: "edit",
      remaining: null,
      ratelimit: null,
    });
  });

  it("gives Unkey's verdicts", async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const k = (over: object) => store.create({ name: "v", permissions: ["vibe.classify"], ...over });
    expect(await store.verify("alm_neverIssued")).toEqual({ kind: "verdict", code: "NOT_FOUND" });
    expect(await store.verify("sk_other_prefix")).toEqual({ kind: "verdict", code: "NOT_FOUND" });
    expect(await store.verify((await k({ expiresAt: past })).key)).toMatchObject({ code: "EXPIRED" });
    expect(await store.verify((await k({ permissions: ["x"] })).key, "vibe.classify")).toMatchObject({
      code: "INSUFFICIENT_PERMISSIONS",
    });
    expect(await store.verify((await k({ permissions: ["vibe.*"] })).key, "vibe.classify")).toMatchObject({
      code: "VALID",
    });
    const used = await k({ remaining: 1 });
    expect(await store.verify(used.key, undefined, { cost: 0 })).toMatchObject({ code: "VALID", remaining: 1 });
    expect(await store.verify(used.key)).toMatchObject({ code: "VALID", remaining: 0 });
    expect(await store.verify(used.key)).toMatchObject({ code: "USAGE_EXCEEDED" });
    const limited = await k({ ratelimit: { limit: 2, durationSec: 60 } });
    expect(await store.verify(limited.key)).toMatchObject({ code: "VALID", ratelimit: { limit: 2, remaining: 1 } });
    expect(await store.verify(limited.key)).toMatchObject({ code: "VALID" });
    const third = await store.verify(limited.key);
    expect(third).toMatchObject({ code: "RATE_LIMITED", ratelimit: { limit: 2, remaining: 0 } });
  });

  it("credit gives spent uses back; an unlimited key stays unlimited; an unknown id is false", async () => {
    const used = await store.create({ name: "c", permissions: [], remaining: 1 });
    expect(await store.verify(used.key)).toMatchObject({ code: "VALID", remaining: 0 });
    expect(await store.refund(used.id, 1)).toBe(true);
    expect(await store.verify(used.key)).toMatchObject({ code: "VALID", remaining: 0 });
    const unlimited = await store.create({ name: "u", permissions: [] });
    expect(await store.refund(unlimited.id, 1)).toBe(true);
    expect((await store.list()).find((k) => k.id === unlimited.id)?.remaining).toBeNull();
    expect(await store.refund("key_missing", 1)).toBe(false);
  });
}

describe("EmbeddedKeyStore failures: an outage is `unavailable`, a bug is thrown", () => {
  it("a database that refuses connections → unavailable (503 unkey_unavailable upstream of here)", async () => {
    const unreachable = openDatabase({ dataDir: "", databaseUrl: "postgres://almanac@127.0.0.1:1/almanac", logger });
    try {
      const store = new EmbeddedKeyStore(unreachable.db, new MemoryRateLimiter(), new AccountQuotas(unreachable.db));
      expect(await store.verify("alm_somethingPlausible")).toMatchObject({ kind: "unavailable" });
    } finally {
      await unreachable.close();
    }
  });

  it("a programming error is not disguised as an outage: it propagates (and becomes a logged 500)", async () => {
    const database = openDatabase({ dataDir: tempDir(), logger });
    await migrate(database.db);
    try {
      const broken = {
        consume: () => Promise.reject(new TypeError("limiter bug")),
        refund: async () => {},
        reset: async () => {},
        ready: async () => true,
        close: async () => {},
      };
      const store = new EmbeddedKeyStore(database.db, broken, new AccountQuotas(database.db));
      const created = await store.create({ name: "k", permissions: [], ratelimit: { limit: 5, durationSec: 60 } });
      await expect(store.verify(created.key)).rejects.toThrow("limiter bug");
      const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      const locked = new EmbeddedKeyStore(
        database.db,
        { ...broken, consume: () => Promise.reject(busy) },
        new AccountQuotas(database.db),
      );
      expect(await locked.verify(created.key)).toMatchObject({ kind: "unavailable" });
    } finally {
      await database.close();
    }
  });
});

describe("EmbeddedKeyStore on SQLite", () => {
  suite(async () => ({ database: openDatabase({ dataDir: tempDir(), logger }), drop: async () => {} }));
});

describe.skipIf(!DATABASE_URL)(`EmbeddedKeyStore on PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
  suite(async () => {
    const pg = await freshPostgresUrl();
    return { database: openDatabase({ dataDir: "", databaseUrl: pg.url, logger }), drop: pg.drop };
  });
});
