import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import { authSecret, call, workersListening } from "./support.js";

const PEOPLE = 24;

/**
 * `WEB_CONCURRENCY=2` on one SQLite file: two processes write better-auth's tables at once. A
 * transaction that began deferred and then wrote got SQLITE_BUSY(_SNAPSHOT) at once, without
 * waiting (SQLite cannot let a reader that saw an older snapshot become the writer): 500s on sign-in.
 */
describe("sign-in on a WEB_CONCURRENCY=2 cluster sharing one SQLite file", () => {
  let server: ServerProcess;
  let smtp: SmtpTestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await spawnServer(
      {
        DATA_DIR: tempDir(),
        DATABASE_URL: "",
        REDIS_URL: "",
        WEB_CONCURRENCY: "2",
        LOG_LEVEL: "info",
        TRUST_PROXY: "1",
        MAIL_URL: smtp.url,
        AUTH_SECRET: authSecret(),
      },
      { startTimeoutMs: 60_000 },
    );
    await workersListening(server, 2);
  }, 120_000);

  afterAll(async () => {
    await stop(server);
    await smtp?.close();
  });

  const auth = (path: string, body: unknown, person: number) =>
    call(server.url, `/api/auth${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: server.url,
        // Each person from their own address, so no per-address budget is what answers.
        "x-forwarded-for": `198.51.100.${person + 1}`,
      },
      body: JSON.stringify(body),
    });
  const email = (i: number) => `person${i}@example.com`;
  const people = Array.from({ length: PEOPLE }, (_, i) => i);

  it("answers every concurrent code request, wrong guess and right code without a 5xx", async () => {
    const sent = await Promise.all(
      people.map((i) => auth("/email-otp/send-verification-otp", { email: email(i), type: "sign-in" }, i)),
    );
    expect(sent.map((a) => a.status)).toEqual(people.map(() => 200));

    const wrong = await Promise.all(
      people.map((i) => auth("/sign-in/email-otp", { email: email(i), otp: "000000" }, i)),
    );
    expect(wrong.map((a) => a.status)).toEqual(people.map(() => 400));

    const codes = await Promise.all(
      people.map(async (i) => {
        const mail = await smtp.waitForMessage((m) => m.rcptTo.includes(email(i)));
        return /\b(\d{6})\b/.exec(mail.text ?? "")?.[1] ?? "";
      }),
    );
    const right = await Promise.all(
      people.map((i) => auth("/sign-in/email-otp", { email: email(i), otp: codes[i] }, i)),
    );
    expect(right.map((a) => a.status)).toEqual(people.map(() => 200));
    expect(server.output()).not.toMatch(/database is locked/);
  }, 120_000);
});
