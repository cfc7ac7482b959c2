import { afterEach, describe, expect, it } from "vitest";
import { deliverContact } from "../../src/features/contact/deliver.js";
import { ContactOutbox, createContactOutbox } from "../../src/features/contact/outbox.js";
import { type ContactRow, ContactStore } from "../../src/features/contact/store.js";
import { IDEMPOTENCY_MISMATCH } from "../../src/features/shared/idempotency-answers.js";
import { errorOf } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { ADA, type ContactHarness, contactHarness, DESK, until } from "./setup.js";

const MIN = 60_000;

/** A clock the test moves by hand, shared by the app and its outbox. */
function clock(start = Date.parse("2026-11-22T10:00:00Z")) {
  let at = start;
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

describe.each([
  ["SQLite", false],
  [`PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, true],
])("contact outbox on %s", (_name, postgres) => {
  let h: ContactHarness | undefined;
  let drop: (() => Promise<void>) | undefined;
  const c = clock();

  const start = async (env: Record<string, string> = {}) => {
    const pg = postgres ? await freshPostgresUrl() : undefined;
    drop = pg?.drop;
    h = await contactHarness({ ...(pg && { DATABASE_URL: pg.url }), ...env }, () => ({ now: c.now }));
    return { h, outbox: createContactOutbox(h.t.deps) };
  };
  afterEach(async () => {
    await h?.close();
    await drop?.();
    h = undefined;
    drop = undefined;
  });

  it.skipIf(postgres && !DATABASE_URL)("resumes a message a crash left pending, after the grace period", async () => {
    const { h, outbox } = await start({ CONTACT_PENDING_GRACE_MS: String(5 * MIN) });
    // What a crash between "stored" and "sent" leaves behind.
    const row = await new ContactStore(h.t.deps.database.db, c.now).create({ ...ADA, clientIp: "192.0.2.1" });
    c.advance(MIN);
    expect(await outbox.runOnce()).toMatchObject({ due: 0, sent: 0 }); // maybe still being sent
    c.advance(5 * MIN);
    expect(await outbox.runOnce()).toMatchObject({ due: 1, sent: 1 });
    const mail = await h.smtp.waitForMessage((m) => m.text.includes(row.id));
    expect(mail.subject).toBe(`[Contact] ${ADA.subject}`);
    expect(await h.rows()).toEqual([expect.objectContaining({ id: row.id, status: "sent", attempts: 2 })]);
    expect(await outbox.runOnce()).toMatchObject({ due: 0 }); // sent once only
    expect(h.smtp.messages.filter((m) => m.text.includes(row.id))).toHaveLength(1);
  });

  it.skipIf(postgres && !DATABASE_URL)(
    "retries a failed send when the lane is back, with exponential backoff, visible in /metrics",
    async () => {
      const { h, outbox } = await start({ CONTACT_RETRY_BASE_MS: String(MIN), CONTACT_MAX_ATTEMPTS: "3" });
      h.smtp.setMode("reject");
      expect((await h.post(ADA)).status).toBe(502);
      const [failed] = await h.rows();
      expect(failed).toMatchObject({ status: "failed", attempts: 1 });

      c.advance(30_000);
      expect((await outbox.runOnce()).due).toBe(0); // base 1 min not yet passed
      c.advance(31_000);
      expect(await outbox.runOnce()).toMatchObject({ due: 1, failed: 1 }); // lane still refuses: attempt 2
      c.advance(MIN + 1000);
      expect((await outbox.runOnce()).due).toBe(0); // second wait is 2 min
      h.smtp.setMode("accept");
      c.advance(MIN);
      expect(await outbox.runOnce()).toMatchObject({ due: 1, sent: 1 });
      expect(await h.rows()).toEqual([expect.objectContaining({ status: "sent", attempts: 3 })]);

      const metrics = await (await h.t.app.request("/metrics")).text();
      expect(metrics).toMatch(/contact_outbox_sent_total 1\b/);
      expect(metrics).toMatch(/contact_outbox_failed_total 1\b/);
      expect(metrics).toMatch(/contact_outbox_pending 1\b/); // the backlog its last pass saw
    },
  );

  it.skipIf(postgres && !DATABASE_URL)("leaves a message that used up its attempts to the operator", async () => {
    const { h, outbox } = await start({ CONTACT_RETRY_BASE_MS: "1000", CONTACT_MAX_ATTEMPTS: "1" });
    h.smtp.setMode("reject");
    expect((await h.post(ADA)).status).toBe(502);
    h.smtp.setMode("accept");
    c.advance(24 * 60 * MIN);
    expect(await outbox.runOnce()).toMatchObject({ due: 0, sent: 0 });
    expect((await h.rows())[0]?.status).toBe("failed");
  });

  it.skipIf(postgres && !DATABASE_URL)(
    "a retry after the outbox resent a refused message replays its success: one mail per Idempotency-Key",
    async () => {
      const { h, outbox } = await start({ CONTACT_RETRY_BASE_MS: String(MIN) });
      const headers = { "Idempotency-Key": "resent-1" };
      h.smtp.setMode("reject");
      const failed = await h.post(ADA, headers);
      expect(failed.status).toBe(502);
      const id = ((await errorOf(failed)).error.details as { id: string }).id;
      h.smtp.setMode("accept");
      c.advance(MIN);
      expect(await outbox.runOnce()).toMatchObject({ due: 1, sent: 1 });
      for (let i = 0; i < 2; i++) {
        const retry = await h.post(ADA, headers);
        expect([retry.status, retry.headers.get("Idempotent-Replayed")]).toEqual([200, "true"]);
        expect(await retry.json()).toEqual({ id, status: "sent" });
      }
      const other = await h.post({ ...ADA, message: "Another message" }, headers);
      expect((await errorOf(other)).error).toMatchObject({ code: "conflict", message: IDEMPOTENCY_MISMATCH });
      expect((await h.rows()).map((r) => [r.id, r.status])).toEqual([[id, "sent"]]);
      expect(h.smtp.messages.map((m) => m.text.includes(id))).toEqual([true]);
    },
  );

  it.skipIf(postgres && !DATABASE_URL)(
    "a retry while the outbox is resending the message waits for that send and replays it: one mail",
    async () => {
      const { h } = await start({ IDEMPOTENCY_WAIT_MS: "20000" });
      const headers = { "Idempotency-Key": "resending-1" };
      h.smtp.setMode("reject");
      const failed = await h.post(ADA, headers);
      const id = ((await errorOf(failed)).error.details as { id: string }).id;
      h.smtp.setMode("accept");
      // What the outbox does: claim the row (pending again), then send it.
      const store = new ContactStore(h.t.deps.database.db, c.now);
      const [row] = await h.rows();
      const claimed = await store.claimRetry(row as ContactRow);
      expect(claimed).toMatchObject({ id, status: "pending", attempts: 2 });
      const retry = h.post(ADA, headers);
      await new Promise((r) => setTimeout(r, 300)); // the retry finds the message being sent
      const lane = h.t.deps.mail;
      if (!lane) throw new Error("no mail lane");
      expect(await deliverContact(store, lane, DESK, claimed as ContactRow)).toMatchObject({ ok: true });
      const answer = await retry;
      expect([answer.status, answer.headers.get("Idempotent-Replayed")]).toEqual([200, "true"]);
      expect(await answer.json()).toEqual({ id, status: "sent" });
      expect((await h.rows()).map((r) => [r.id, r.status, r.attempts])).toEqual([[id, "sent", 2]]);
      expect(h.smtp.messages.map((m) => m.text.includes(id))).toEqual([true]);
    },
  );

  it.skipIf(postgres && !DATABASE_URL)(
    "a send that outlived the grace (a stalled process) never marks failed the message the outbox has sent since",
    async () => {
      const { h, outbox } = await start({ CONTACT_RETRY_BASE_MS: String(MIN) });
      h.smtp.setMode("lost-reply"); // the request's send takes the mail server's whole timeout
      const request = h.post(ADA);
      await until(() => h.smtp.messages.length > 0);
      const [row] = await h.rows();
      // As if the request's process stalled past the grace: the outbox takes the message and sends it.
      c.advance(10 * MIN);
      h.smtp.setMode("accept");
      expect(await outbox.runOnce()).toMatchObject({ due: 1, sent: 1 });
      expect((await request).status).toBe(502); // its own send did time out
      expect(await h.rows()).toEqual([
        expect.objectContaining({ id: row?.id, status: "sent", attempts: 2, last_error: null }),
      ]);
      c.advance(60 * MIN);
      expect(await outbox.runOnce()).toMatchObject({ due: 0, sent: 0 }); // no third copy
      expect(h.smtp.messages.filter((m) => m.text.includes(row?.id as string))).toHaveLength(2);
    },
  );

  it.skipIf(postgres && !DATABASE_URL)("two instances on one database never send a message twice", async () => {
    const { h, outbox } = await start({ CONTACT_PENDING_GRACE_MS: "1000" });
    const store = new ContactStore(h.t.deps.database.db, c.now);
    const rows = await Promise.all(
      Array.from({ length: 5 }, (_, i) => store.create({ ...ADA, subject: `n${i}`, clientIp: "192.0.2.1" })),
    );
    c.advance(5000); // past the grace, which is at least twice the harness's 2 s mail timeout
    const other = createContactOutbox(h.t.deps);
    const [a, b] = await Promise.all([outbox.runOnce(), other.runOnce()]);
    expect(a.sent + b.sent).toBe(5);
    expect(a.skipped + b.skipped + a.sent + b.sent).toBeGreaterThanOrEqual(5);
    for (const r of rows) {
      await h.smtp.waitForMessage((m) => m.text.includes(r.id));
      expect(h.smtp.messages.filter((m) => m.text.includes(r.id))).toHaveLength(1);
    }
  });
});

describe("the outbox worker loop", () => {
  it("never resends a message a request is still sending, whatever CONTACT_PENDING_GRACE_MS says", async () => {
    // The grace is shorter than the mail timeout: the row is "pending" for as long as the send may take.
    const h = await contactHarness({
      MAIL_TIMEOUT_MS: "3000",
      CONTACT_PENDING_GRACE_MS: "1000",
      CONTACT_OUTBOX_INTERVAL_MS: "100",
    });
    const outbox = createContactOutbox(h.t.deps);
    try {
      outbox.start();
      h.smtp.setMode("lost-reply"); // the server takes the mail and is slow to say so
      const res = await h.post(ADA);
      expect(res.status).toBe(502); // by the mail timeout
      const { id } = (await errorOf(res)).error.details as { id: string };
      expect(h.smtp.messages.filter((m) => m.text.includes(id))).toHaveLength(1);
    } finally {
      await outbox.stop();
      await h.close();
    }
  });

  it("start() runs passes on its interval and stop() waits for the one in flight", async () => {
    const h = await contactHarness({ CONTACT_OUTBOX_INTERVAL_MS: "100", CONTACT_PENDING_GRACE_MS: "1000" });
    try {
      const row = await new ContactStore(h.t.deps.database.db, () => new Date(Date.now() - 5000)).create({
        ...ADA,
        clientIp: "192.0.2.1",
      });
      const outbox = createContactOutbox(h.t.deps);
      expect(outbox).toBeInstanceOf(ContactOutbox);
      outbox.start();
      await h.smtp.waitForMessage((m) => m.text.includes(row.id), 10_000);
      await outbox.stop();
      expect((await h.rows())[0]?.status).toBe("sent");
    } finally {
      await h.close();
    }
  });
});
