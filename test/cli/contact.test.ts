import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContactStore } from "../../src/features/contact/store.js";
import { ADA, type ContactHarness, contactHarness, DESK, until } from "../contact/setup.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/env.js";

describe("almanac contact list|retry (temp DATA_DIR, real SMTP server)", () => {
  const dataDir = tempDir();
  let h: ContactHarness;
  let env: Record<string, string>;
  let failedId: string;

  beforeAll(async () => {
    h = await contactHarness({ DATA_DIR: dataDir });
    env = { DATA_DIR: dataDir, MAIL_URL: h.smtp.url, CONTACT_TO: DESK, MAIL_TIMEOUT_MS: "2000" };
    // A send the mail server refuses leaves a failed row behind.
    h.smtp.setMode("reject");
    const res = await h.post({ ...ADA, subject: "left behind" });
    expect(res.status).toBe(502);
    failedId = ((await res.json()) as { error: { details: { id: string } } }).error.details.id;
    h.smtp.setMode("accept");
  });
  afterAll(() => h.close());

  it("list --status failed shows the refused message with its reason and attempts", async () => {
    const run = await runCli(["contact", "list", "--status", "failed"], env);
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as { id: string; status: string; attempts: number; last_error: string }[];
    expect(rows).toEqual([
      expect.objectContaining({
        id: failedId,
        status: "failed",
        attempts: 1,
        last_error: expect.stringMatching(/550/),
      }),
    ]);
  });

  it("outbox shows the backlog, and the failed message is due once the backoff has passed", async () => {
    const waiting = await runCli(["contact", "outbox"], { ...env, CONTACT_RETRY_BASE_MS: "3600000" });
    expect(waiting.code).toBe(0);
    expect(JSON.parse(waiting.stdout)).toEqual({ pending: 0, failed: 1, due_now: 0, exhausted: 0 });
    // Due once 100 ms (the smallest base) have passed since the refused send: in-process that may not be yet.
    const failedAt = Date.parse((await h.rows()).find((r) => r.id === failedId)?.updated_at ?? "");
    await new Promise((r) => setTimeout(r, Math.max(0, failedAt + 100 - Date.now())));
    const due = await runCli(["contact", "outbox"], { ...env, CONTACT_RETRY_BASE_MS: "100" });
    expect(JSON.parse(due.stdout)).toMatchObject({ failed: 1, due_now: 1 });
  });

  it("retry --all-failed sends it, and list shows it sent on attempt 2", async () => {
    const run = await runCli(["contact", "retry", "--all-failed"], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({ id: failedId, status: "sent", attempts: 2 });
    const m = await h.smtp.waitForMessage((x) => x.text.includes(failedId));
    expect(m.subject).toBe("[Contact] left behind");
    expect(m.rcptTo).toEqual([DESK]);
    expect(m.replyTo).toBe(ADA.email);

    const list = await runCli(["contact", "list", "--status", "sent"], env);
    expect(JSON.parse(list.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: failedId, status: "sent", attempts: 2 })]),
    );
    expect(JSON.parse((await runCli(["contact", "list", "--status", "failed"], env)).stdout)).toEqual([]);
  });

  it("retry ID of a message already sent refuses and sends nothing", async () => {
    const before = h.smtp.messages.length;
    const run = await runCli(["contact", "retry", failedId], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`contact message ${failedId} was already sent`);
    expect(h.smtp.messages.length).toBe(before);
  });

  it("retry ID while the mail server still refuses keeps it failed and exits 1", async () => {
    h.smtp.setMode("reject");
    const res = await h.post({ ...ADA, subject: "still refused" });
    const id = ((await res.json()) as { error: { details: { id: string } } }).error.details.id;
    const run = await runCli(["contact", "retry", id], env);
    h.smtp.setMode("accept");
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ id, status: "failed", attempts: 2 });
  });

  it("retry ID of a message a request is still sending refuses and sends nothing more", async () => {
    h.smtp.hold(); // the request's send waits for the mail server's answer: its row is pending
    const sending = h.post({ ...ADA, subject: "in flight" });
    await until(() => h.smtp.held > 0);
    const row = (await h.rows()).find((r) => r.subject === "in flight");
    expect(row?.status).toBe("pending");
    const id = row?.id as string;
    const run = await runCli(["contact", "retry", id], env);
    h.smtp.release();
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(
      `contact message ${id} is being sent (pending since ${row?.updated_at}); the outbox resends it if that send was cut off`,
    );
    expect(await (await sending).json()).toEqual({ id, status: "sent" });
    expect(h.smtp.messages.filter((m) => m.text.includes(id))).toHaveLength(1);
    expect((await h.rows()).find((r) => r.id === id)).toMatchObject({ status: "sent", attempts: 1 });
  });

  it("retry ID of a message a crash left pending (past the grace) sends it", async () => {
    const store = new ContactStore(h.t.deps.database.db, () => new Date(Date.now() - 600_000));
    const row = await store.create({ ...ADA, subject: "left pending", clientIp: "192.0.2.1" });
    const run = await runCli(["contact", "retry", row.id], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual({ id: row.id, status: "sent", attempts: 2 });
    expect(h.smtp.messages.filter((m) => m.text.includes(row.id))).toHaveLength(1);
  });

  it("retry without MAIL_URL, or without an ID, explains itself", async () => {
    const noLane = await runCli(["contact", "retry", "--all-failed"], { DATA_DIR: dataDir });
    expect(noLane.code).toBe(1);
    expect(noLane.stderr).toContain("MAIL_URL is not set");
    const noId = await runCli(["contact", "retry"], env);
    expect(noId.code).toBe(1);
    expect(noId.stderr).toContain("give either a message ID or --all-failed");
  });
});
