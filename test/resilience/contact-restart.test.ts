import { afterEach, describe, expect, it } from "vitest";
import { ADA, DESK, SENDER } from "../contact/setup.js";
import { DATABASE_URL, freshPostgresUrl, skipReason, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

/** tsx compiles the sources at start: on a loaded machine that takes a while. */
const SLOW_START = { startTimeoutMs: 60_000 };
const idOf = (text: string) => /Message id: (con_[0-9a-f]{20})/.exec(text)?.[1];
const messageIdOf = (headers: string[]) => headers.find((l) => /^message-id:/i.test(l));

describe.each([
  ["SQLite", false],
  [`PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, true],
])("contact desk: kill -9 mid-send, then a restart (%s)", { timeout: 150_000 }, (_name, postgres) => {
  let server: ServerProcess | undefined;
  let smtp: SmtpTestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop(server);
    await smtp?.close();
    await drop?.();
  });

  it.skipIf(postgres && !DATABASE_URL)(
    "the stored message is resent by the outbox once, with the Message-ID of the copy the server already took",
    async () => {
      smtp = await startSmtpServer();
      const pg = postgres ? await freshPostgresUrl() : undefined;
      drop = pg?.drop;
      const env = {
        DATA_DIR: tempDir(),
        ...(pg && { DATABASE_URL: pg.url }),
        MAIL_URL: smtp.url,
        MAIL_FROM: SENDER,
        CONTACT_TO: DESK,
        MAIL_TIMEOUT_MS: "3000", // the send is still waiting for its reply when the process dies
        CONTACT_PENDING_GRACE_MS: "1000", // 6 s in effect: twice the mail timeout
        CONTACT_OUTBOX_INTERVAL_MS: "200",
      };
      server = await spawnServer(env, SLOW_START);
      // The server takes the mail, and the process dies before its reply: the row stays pending.
      smtp.setMode("lost-reply");
      const sending = fetch(`${server.url}/v1/mail/contact`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(ADA),
      }).catch((err: unknown) => err);
      const first = await smtp.waitForMessage(() => true, 20_000);
      server.proc.kill("SIGKILL");
      await server.exited;
      expect(await sending).toBeInstanceOf(Error); // the client never got an answer
      const id = idOf(first.text);
      expect(id).toBeDefined();

      smtp.setMode("accept");
      server = await spawnServer(env, SLOW_START);
      const second = await smtp.waitForMessage((m) => m !== first && m.text.includes(id as string), 30_000);
      // SMTP cannot tell a lost reply from a lost mail, so the copy is sent again; it carries the
      // stored message's Message-ID, by which the desk's mail software keeps one.
      expect(messageIdOf(second.headers)).toBe(`Message-ID: <${id}@example.test>`);
      expect(messageIdOf(first.headers)).toBe(messageIdOf(second.headers));
      await new Promise((r) => setTimeout(r, 2000)); // ten outbox passes: marked sent, not resent again
      expect(smtp.messages.filter((m) => m.text.includes(id as string))).toHaveLength(2);
    },
  );
});
