import { createServer, type Server } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSmtpMailLane } from "../../src/adapters/smtp-mail.js";
import type { MailLane } from "../../src/ports/mail-lane.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

const logger = pino({ level: "silent" });

describe("SMTP mail lane against a real SMTP server", () => {
  let smtp: SmtpTestServer;
  let lane: MailLane;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    lane = createSmtpMailLane({ url: smtp.url, from: "almanac@example.test", timeoutMs: 2000, logger });
  });
  afterAll(async () => {
    await lane.close();
    await smtp.close();
  });
  beforeEach(() => smtp.setMode("accept"));

  it("delivers with the fixed From, the To, Reply-To and body", async () => {
    const result = await lane.send({
      to: "desk@example.test",
      subject: "Hello there",
      text: "Body line one\nline two",
      replyTo: { name: "Ada Lovelace", address: "ada@example.test" },
    });
    expect(result.ok).toBe(true);
    const m = await smtp.waitForMessage((x) => x.subject === "Hello there");
    expect(m.from).toBe("almanac@example.test");
    expect(m.mailFrom).toBe("almanac@example.test");
    expect(m.to).toEqual(["desk@example.test"]);
    expect(m.rcptTo).toEqual(["desk@example.test"]);
    expect(m.replyTo).toBe("ada@example.test");
    expect(m.replyToName).toBe("Ada Lovelace");
    expect(m.text.trim()).toBe("Body line one\nline two");
  });

  it("a 550 at RCPT is a refusal naming the SMTP reply", async () => {
    smtp.setMode("reject");
    const result = await lane.send({ to: "desk@example.test", subject: "x", text: "y" });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^EENVELOPE 550/) });
  });

  it("a dropped connection is a refusal", async () => {
    smtp.setMode("drop");
    const result = await lane.send({ to: "desk@example.test", subject: "x", text: "y" });
    expect(result.ok).toBe(false);
  });

  it("a server that never answers DATA is a refusal by the deadline", async () => {
    smtp.setMode("hang");
    const result = await lane.send({ to: "desk@example.test", subject: "hang", text: "y" });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/timed? ?out|ETIMEDOUT/i) });
  });

  it("header text that looks RFC 2047-encoded arrives as written, never as the text it would decode to", async () => {
    // "=?utf-8?b?…?=" decodes to "Hi\r\nBcc: eve@evil.test": a reader shown the decoded form sees
    // a line break and a header the desk refused to send.
    const looksEncoded = `=?utf-8?b?${Buffer.from("Hi\r\nBcc: eve@evil.test").toString("base64")}?=`;
    const cases = [
      { subject: `[Contact] ${looksEncoded}`, name: looksEncoded },
      { subject: "=?iso-8859-1?q?caf=E9?= and =?x?", name: 'Ada "=?utf-8?q?Bob?=" Lovelace' },
      { subject: `long ${"=?utf-8?q?x?= ünïcødé 😀 ".repeat(12)}end`, name: `${"=?".repeat(40)}` },
    ];
    for (const { subject, name } of cases) {
      const result = await lane.send({
        to: "desk@example.test",
        subject,
        text: "y",
        replyTo: { name, address: "ada@example.test" },
      });
      expect(result.ok).toBe(true);
      const m = smtp.messages.at(-1);
      expect(m?.subject).toBe(subject);
      expect(m?.replyToName).toBe(name);
      expect(m?.replyTo).toBe("ada@example.test");
      expect(m?.headers.every((l) => /^[!-9;-~]+: /.test(l))).toBe(true);
    }
  });

  it("refuses a header field that still contains a line break", async () => {
    const before = smtp.messages.length;
    const result = await lane.send({ to: "desk@example.test", subject: "a\r\nBcc: x@example.test", text: "y" });
    expect(result.ok).toBe(false);
    expect(smtp.messages.length).toBe(before);
  });
});

describe("SMTP mail lane without a server", () => {
  let closed: Server;
  let port: number;
  beforeAll(async () => {
    // Bind then close: the port is known and nothing listens on it.
    closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
  });

  it("a refused connection is a refusal", async () => {
    const lane = createSmtpMailLane({
      url: `smtp://127.0.0.1:${port}`,
      from: "a@example.test",
      timeoutMs: 2000,
      logger,
    });
    const result = await lane.send({ to: "desk@example.test", subject: "x", text: "y" });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^(ESOCKET|ECONNECTION)/) });
    await lane.close();
  });
});
