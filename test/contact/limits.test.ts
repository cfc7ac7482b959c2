import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { errorOf, expectRateLimited } from "../helpers/app.js";
import { ADA, type ContactHarness, contactHarness } from "./setup.js";

const from = (ip: string) => ({ "X-Forwarded-For": ip });

describe("contact desk limits", () => {
  let h: ContactHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("per client IP: the (limit+1)th message in an hour → 429 CONTACT_HOURLY_LIMIT; another IP still sends", async () => {
    h = await contactHarness({ CONTACT_HOURLY_LIMIT: "2", TRUST_PROXY: "1" });
    expect((await h.post(ADA, from("203.0.113.7"))).status).toBe(200);
    const second = await h.post(ADA, from("203.0.113.7"));
    expect(second.status).toBe(200);
    expect(second.headers.get("RateLimit")).toMatch(/^"contact";r=0;t=\d+$/);

    const third = await h.post(ADA, from("203.0.113.7"));
    await expectRateLimited(
      third,
      "CONTACT_HOURLY_LIMIT",
      "Contact limit reached: at most 2 messages per hour from one address. Try again later.",
    );
    expect(third.headers.get("RateLimit-Policy")).toContain('"contact";q=2;w=3600');
    expect(h.smtp.messages).toHaveLength(2);
    expect(await h.rows()).toHaveLength(2);

    expect((await h.post(ADA, from("198.51.100.9"))).status).toBe(200);
  });

  it("daily global cap: → 429 CONTACT_DAILY_CAP whatever the client IP", async () => {
    h = await contactHarness({ CONTACT_DAILY_CAP: "2", TRUST_PROXY: "1" });
    expect((await h.post(ADA, from("203.0.113.1"))).status).toBe(200);
    expect((await h.post(ADA, from("203.0.113.2"))).status).toBe(200);
    const third = await h.post(ADA, from("203.0.113.3"));
    await expectRateLimited(
      third,
      "CONTACT_DAILY_CAP",
      "The contact desk has reached its daily message cap. Try again tomorrow.",
    );
    expect(h.smtp.messages).toHaveLength(2);
  });

  it("a message the daily cap refused does not count against its client's hourly limit", async () => {
    h = await contactHarness({ CONTACT_HOURLY_LIMIT: "2", CONTACT_DAILY_CAP: "1", TRUST_PROXY: "1" });
    expect((await h.post(ADA, from("203.0.113.60"))).status).toBe(200);
    // One message sent in this hour: every later refusal is the daily cap's, never "2 per hour".
    for (let i = 0; i < 3; i++) {
      const refused = await h.post(ADA, from("203.0.113.60"));
      await expectRateLimited(
        refused,
        "CONTACT_DAILY_CAP",
        "The contact desk has reached its daily message cap. Try again tomorrow.",
      );
      expect(refused.headers.get("RateLimit")).toMatch(/^"contact";r=1;t=\d+$/);
    }
  });

  it("an Idempotency-Key retry of a refused send that meets the limit leaves the stored message to the outbox", async () => {
    h = await contactHarness({ CONTACT_HOURLY_LIMIT: "1", TRUST_PROXY: "1" });
    const headers = { ...from("203.0.113.70"), "Idempotency-Key": "limited-retry" };
    h.smtp.setMode("reject");
    expect((await h.post(ADA, headers)).status).toBe(502);
    h.smtp.setMode("accept");
    for (let i = 0; i < 3; i++) {
      await expectRateLimited(
        await h.post(ADA, headers),
        "CONTACT_HOURLY_LIMIT",
        "Contact limit reached: at most 1 messages per hour from one address. Try again later.",
      );
    }
    // Not sent, not claimed: still failed after one attempt, retried by the outbox on its backoff.
    expect(await h.rows()).toEqual([expect.objectContaining({ status: "failed", attempts: 1 })]);
  });

  it("a message the database could not store (500) counts against no limit", async () => {
    h = await contactHarness({ CONTACT_HOURLY_LIMIT: "2", CONTACT_DAILY_CAP: "2", TRUST_PROXY: "1" });
    const db = h.t.deps.database.db;
    await sql`create trigger full_disk before insert on contact_messages begin select raise(abort, 'disk full'); end`.execute(
      db,
    );
    for (const headers of [{}, {}, { "Idempotency-Key": "store-fails" }] as Record<string, string>[]) {
      const res = await h.post(ADA, { ...from("203.0.113.80"), ...headers });
      expect(res.status).toBe(500);
      expect((await errorOf(res)).error).toMatchObject({ code: "internal", message: "Internal error." });
    }
    await sql`drop trigger full_disk`.execute(db);
    // Nothing was stored or sent: the client's hour and the desk's day are as they were.
    const first = await h.post(ADA, from("203.0.113.80"));
    expect([first.status, first.headers.get("RateLimit")]).toEqual([200, expect.stringMatching(/^"contact";r=1;/)]);
    expect((await h.post(ADA, { ...from("203.0.113.80"), "Idempotency-Key": "store-fails" })).status).toBe(200);
    expect(h.smtp.messages).toHaveLength(2);
  });

  it("an idempotent replay does not count against the limit", async () => {
    h = await contactHarness({ CONTACT_HOURLY_LIMIT: "1", TRUST_PROXY: "1" });
    const headers = { ...from("203.0.113.50"), "Idempotency-Key": "once" };
    expect((await h.post(ADA, headers)).status).toBe(200);
    const replay = await h.post(ADA, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(h.smtp.messages).toHaveLength(1);
  });
});
