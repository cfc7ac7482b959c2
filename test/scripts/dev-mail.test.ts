import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmtpMailLane } from "../../src/adapters/smtp-mail.js";

/** README's quick start: `node scripts/dev-mail.mjs` is the mail lane for a local try. */
describe("scripts/dev-mail.mjs", () => {
  let child: ChildProcess;
  let output = "";
  let url = "";

  beforeAll(async () => {
    child = spawn(process.execPath, ["scripts/dev-mail.mjs", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    while (!/MAIL_URL=(\S+)/.test(output)) await once(child.stdout as NodeJS.ReadableStream, "data");
    url = (output.match(/MAIL_URL=(\S+)/) as RegExpMatchArray)[1] as string;
  });
  afterAll(() => {
    child.kill();
  });

  it("takes a mail from the SMTP lane and prints its recipient, subject and text", async () => {
    const lane = createSmtpMailLane({
      url,
      from: "almanac@localhost",
      timeoutMs: 5000,
      logger: pino({ level: "silent" }),
    });
    try {
      await lane.send({ to: "ada@example.com", subject: "Your Almanac sign-in code", text: "Your code is 123456" });
    } finally {
      await lane.close();
    }
    for (let i = 0; i < 50 && !output.includes("123456"); i++) await new Promise((r) => setTimeout(r, 20));
    expect(url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    expect(output).toContain("--- mail to ada@example.com\nSubject: Your Almanac sign-in code\n\nYour code is 123456");
  });
});
