import type { AppDeps } from "../../src/deps.js";
import type { ContactRow } from "../../src/features/contact/store.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

export const DESK = "desk@example.test";
export const SENDER = "almanac@example.test";

export interface ContactHarness {
  t: TestApp;
  smtp: SmtpTestServer;
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  rows(): Promise<ContactRow[]>;
  close(): Promise<void>;
}

/** The real app wired to a real SMTP server on 127.0.0.1; `env` overrides the defaults below. */
export async function contactHarness(
  env: Record<string, string | undefined> = {},
  patch?: (deps: AppDeps) => Partial<AppDeps>,
): Promise<ContactHarness> {
  const smtp = await startSmtpServer();
  const t = await testApp(
    {
      MAIL_URL: smtp.url,
      MAIL_FROM: SENDER,
      CONTACT_TO: DESK,
      MAIL_TIMEOUT_MS: "2000", // small enough for the hang test, roomy on a busy machine
      CONTACT_HOURLY_LIMIT: "1000000",
      ...env,
    },
    patch,
  );
  return {
    t,
    smtp,
    post: async (body, headers = {}) =>
      t.app.request("/v1/mail/contact", {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    rows: () => t.deps.database.db.selectFrom("contact_messages").selectAll().orderBy("created_at").execute(),
    close: async () => {
      await t.close();
      await smtp.close();
    },
  };
}

export const ADA = {
  name: "Ada Lovelace",
  email: "ada@example.com",
  subject: "Question about VAT",
  message: "Hello,\nis the reduced rate included?\nAda",
};

/** Resolves once `check()` holds (looked at every 10 ms), or fails after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
