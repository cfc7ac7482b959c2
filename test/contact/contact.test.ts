import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { errorOf, testApp } from "../helpers/app.js";
import { ADA, type ContactHarness, contactHarness, DESK, SENDER } from "./setup.js";

describe("POST /v1/mail/contact with a real SMTP server", () => {
  let h: ContactHarness;
  beforeAll(async () => {
    h = await contactHarness();
  });
  afterAll(() => h.close());
  beforeEach(() => h.smtp.setMode("accept"));

  it("sends the message: fixed From and To, the sender only as Reply-To, stored as sent", async () => {
    const res = await h.post(ADA);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; status: string };
    expect(body).toEqual({ id: expect.stringMatching(/^con_[0-9a-f]{20}$/), status: "sent" });
    expect(res.headers.get("RateLimit-Policy")).toContain('"contact";q=1000000;w=3600');
    expect(res.headers.get("RateLimit")).toMatch(/^"contact";r=\d+;t=\d+$/);

    const m = await h.smtp.waitForMessage((x) => x.text.includes(body.id));
    expect(m.from).toBe(SENDER);
    expect(m.mailFrom).toBe(SENDER);
    expect(m.to).toEqual([DESK]);
    expect(m.rcptTo).toEqual([DESK]);
    expect(m.replyTo).toBe(ADA.email);
    expect(m.replyToName).toBe(ADA.name);
    expect(m.subject).toBe("[Contact] Question about VAT");
    expect(m.text).toContain(ADA.message);
    expect(m.text).toContain("Name: Ada Lovelace\nE-mail: ada@example.com");

    const row = (await h.rows()).find((r) => r.id === body.id);
    expect(row).toMatchObject({ status: "sent", attempts: 1, last_error: null, email: ADA.email });
    expect(row?.message_id).toBeTruthy();
  });

  it("without a subject, the subject names the sender", async () => {
    const { subject: _, ...noSubject } = ADA;
    const res = await h.post({ ...noSubject, name: "Grace Hopper" });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const m = await h.smtp.waitForMessage((x) => x.text.includes(id));
    expect(m.subject).toBe("[Contact] Message from Grace Hopper");
  });

  it("a 550 from the mail server → 502 upstream_error, and the message is kept as failed", async () => {
    h.smtp.setMode("reject");
    const res = await h.post({ ...ADA, subject: "rejected one" });
    expect(res.status).toBe(502);
    const { error } = await errorOf(res);
    expect(error.code).toBe("upstream_error");
    expect(error.message).toBe("The mail server refused the message; it has been stored for the operator to resend.");
    const id = (error.details as { id: string }).id;
    const row = (await h.rows()).find((r) => r.id === id);
    expect(row).toMatchObject({ status: "failed", attempts: 1, subject: "rejected one" });
    expect(row?.last_error).toMatch(/^EENVELOPE 550/);
  });

  it("a dropped connection → 502 upstream_error", async () => {
    h.smtp.setMode("drop");
    const res = await h.post(ADA);
    expect(res.status).toBe(502);
    expect((await errorOf(res)).error.code).toBe("upstream_error");
  });

  it("a mail server that never answers DATA → 502 upstream_error by the mail timeout", async () => {
    h.smtp.setMode("hang");
    const res = await h.post({ ...ADA, subject: "hung" });
    expect(res.status).toBe(502);
    const { error } = await errorOf(res);
    expect(error.code).toBe("upstream_error");
    const row = (await h.rows()).find((r) => r.id === (error.details as { id: string }).id);
    expect(row?.last_error).toMatch(/ETIMEDOUT|timeout/i);
  });

  it("Idempotency-Key: a retried request sends one mail and replays the answer", async () => {
    const key = "retry-me-1";
    const body = { ...ADA, subject: "idempotent" };
    const first = await h.post(body, { "Idempotency-Key": key });
    expect(first.status).toBe(200);
    const second = await h.post(body, { "Idempotency-Key": key });
    expect(second.status).toBe(200);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await second.json()).toEqual(await first.json());
    expect(h.smtp.messages.filter((m) => m.subject === "[Contact] idempotent")).toHaveLength(1);

    const other = await h.post({ ...body, message: "something else" }, { "Idempotency-Key": key });
    expect(other.status).toBe(409);
    const { error } = await errorOf(other);
    expect(error.code).toBe("conflict");
    expect(error.message).toBe("Idempotency-Key was already used with a different request body.");
  });

  it("Idempotency-Key: a retry after a refused send resends the same stored message", async () => {
    const key = "retry-after-failure";
    const body = { ...ADA, subject: "second chance" };
    h.smtp.setMode("reject");
    const failed = await h.post(body, { "Idempotency-Key": key });
    expect(failed.status).toBe(502);
    const failedId = ((await errorOf(failed)).error.details as { id: string }).id;
    h.smtp.setMode("accept");
    const retried = await h.post(body, { "Idempotency-Key": key });
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ id: failedId, status: "sent" });
    const rows = (await h.rows()).filter((r) => r.subject === "second chance");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "sent", attempts: 2, last_error: null });
    expect(h.smtp.messages.filter((m) => m.subject === "[Contact] second chance")).toHaveLength(1);
  });

  it("a mail the server took but whose reply was lost, resent on retry: both copies carry one Message-ID", async () => {
    // SMTP cannot tell "not delivered" from "delivered, reply lost": the resend is a second copy,
    // and its Message-ID, the stored message's, is what lets the desk's mail software keep one.
    const key = "lost-reply-1";
    const body = { ...ADA, subject: "lost reply" };
    h.smtp.setMode("lost-reply");
    const failed = await h.post(body, { "Idempotency-Key": key });
    expect(failed.status).toBe(502);
    const id = ((await errorOf(failed)).error.details as { id: string }).id;
    h.smtp.setMode("accept");
    const retried = await h.post(body, { "Idempotency-Key": key });
    expect(await retried.json()).toEqual({ id, status: "sent" });
    const copies = h.smtp.messages.filter((m) => m.text.includes(id));
    expect(copies).toHaveLength(2);
    const messageIds = copies.map((m) => m.headers.find((l) => /^message-id:/i.test(l)));
    expect(messageIds).toEqual([`Message-ID: <${id}@example.test>`, `Message-ID: <${id}@example.test>`]);
    expect((await h.rows()).find((r) => r.id === id)?.message_id).toBe(`<${id}@example.test>`);
  });

  it("an invalid Idempotency-Key header → 400 invalid_body, in classify's words; nothing sent", async () => {
    const before = h.smtp.messages.length;
    for (const key of ["has space", "", "k".repeat(256), "tab\there"]) {
      const res = await h.post(ADA, { "Idempotency-Key": key });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).error).toMatchObject({
        code: "invalid_body",
        message: "Idempotency-Key must be 1 to 255 visible ASCII characters.",
      });
    }
    expect(h.smtp.messages.length).toBe(before);
  });
});

describe("POST /v1/mail/contact without a mail lane", () => {
  it("→ 503 unavailable, and nothing is stored", async () => {
    const t = await testApp({ MAIL_URL: undefined });
    try {
      expect(t.deps.mail).toBeUndefined();
      const res = await t.app.request("/v1/mail/contact", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(ADA),
      });
      expect(res.status).toBe(503);
      const { error } = await errorOf(res);
      expect(error).toMatchObject({ code: "unavailable", message: "No mail lane is configured on this server." });
      expect(await t.deps.database.db.selectFrom("contact_messages").selectAll().execute()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("the message is stored before it is sent", () => {
  it("when the lane is called, the row already exists as pending", async () => {
    let seen: unknown[] = [];
    const h = await contactHarness({}, (deps) => ({
      mail: deps.mail && {
        send: async (mail) => {
          seen = await deps.database.db.selectFrom("contact_messages").select(["id", "status"]).execute();
          return deps.mail?.send(mail) ?? { ok: false, reason: "no lane" };
        },
        close: () => deps.mail?.close() ?? Promise.resolve(),
      },
    }));
    try {
      const res = await h.post(ADA);
      const { id } = (await res.json()) as { id: string };
      expect(seen).toEqual([{ id, status: "pending" }]);
      expect((await h.rows())[0]?.status).toBe("sent");
    } finally {
      await h.close();
    }
  });
});
