import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { ExpiredRowsSweep } from "../../src/db/expired-rows.js";
import type { AppDeps } from "../../src/deps.js";
import { AUTH_EXPIRIES } from "../../src/features/account/sweep.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { freshPostgresUrl, REDIS_URL, tempDir } from "../helpers/env.js";
import { FormAgent } from "../support/form-agent.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

type AppLike = ConstructorParameters<typeof FormAgent>[0];

/** The six-digit code in the newest sign-in mail to `email`. */
/** The expired-rows sweep over better-auth's tables alone (main.ts runs one over every table). */
export const authSweep = (deps: AppDeps) => new ExpiredRowsSweep(deps.database, deps.logger, deps.now, AUTH_EXPIRIES);

export async function codeFor(smtp: SmtpTestServer, email: string, after = 0): Promise<string> {
  const mail = await smtp.waitForMessage(
    (m) => m.to.includes(email) && m.subject.includes("sign-in code") && smtp.messages.indexOf(m) >= after,
    10_000,
  );
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  if (!code) throw new Error(`no code in mail: ${mail.text}`);
  return code;
}

/** Asks for a sign-in code on the account page as `agent`; returns the code mailed to `email` (unused). */
export async function requestCode(agent: FormAgent, smtp: SmtpTestServer, email: string): Promise<string> {
  const before = smtp.messages.length;
  const sent = await agent.post("/account/sign-in", { email });
  // Post/Redirect/Get: the code form is on the page the redirect leads to.
  expect(sent.status).toBe(303);
  expect(sent.headers.get("location")).toBe("/account");
  return codeFor(smtp, email, before);
}

/** Signs in through the account page by e-mail code; returns the agent holding the session cookie. */
export async function signIn(app: AppLike, publicUrl: string, smtp: SmtpTestServer, email: string) {
  const agent = new FormAgent(app, publicUrl);
  const code = await requestCode(agent, smtp, email);
  const verified = await agent.post("/account/verify", { email, code });
  expect(verified.status).toBe(303);
  expect(verified.headers.get("location")).toBe("/account");
  return agent;
}

/** The CSRF token in the page's forms. */
export function csrfOf(html: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error("no csrf token on the page");
  return token;
}

export async function accountPage(agent: FormAgent): Promise<{ html: string; csrf: string }> {
  const res = await agent.get("/account");
  expect(res.status).toBe(200);
  const html = await res.text();
  return { html, csrf: csrfOf(html) };
}

export interface AccountApp {
  t: TestApp;
  smtp: SmtpTestServer;
  /** A new browser without cookies. */
  agent(): FormAgent;
  signIn(email: string): Promise<FormAgent>;
}

/**
 * Registers beforeAll/afterAll in the calling describe block: an SMTP server, and the app mailing
 * through it at `publicUrl`, on a fresh PostgreSQL schema with `postgres`. `env` adds configuration;
 * it is read inside beforeAll, so it may use what hooks registered before this call started.
 */
export function accountApp(
  publicUrl: string,
  opts: { postgres?: boolean; env?: () => Record<string, string | undefined> } = {},
): AccountApp {
  const rig = {
    agent: () => new FormAgent(rig.t.app, publicUrl),
    signIn: (email: string) => signIn(rig.t.app, publicUrl, rig.smtp, email),
  } as AccountApp;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    rig.smtp = await startSmtpServer();
    const pg = opts.postgres ? await freshPostgresUrl() : undefined;
    drop = pg?.drop;
    rig.t = await testApp({
      MAIL_URL: rig.smtp.url,
      PUBLIC_URL: publicUrl,
      ...(pg && { DATABASE_URL: pg.url }),
      ...opts.env?.(),
    });
  });
  afterAll(async () => {
    await rig.t?.close();
    await rig.smtp?.close();
    await drop?.();
  });
  return rig;
}

/**
 * Registers beforeAll/afterAll: an SMTP server and `count` instances of the app mailing through
 * it with one AUTH_SECRET; with `shared`, on one fresh PostgreSQL schema and REDIS_URL, as
 * instances behind a load balancer are (else each on its own SQLite).
 */
export function accountInstances(
  publicUrl: string,
  count: number,
  shared: boolean,
): { apps: TestApp[]; smtp: () => SmtpTestServer } {
  const apps: TestApp[] = [];
  let smtp: SmtpTestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    const pg = shared ? await freshPostgresUrl() : undefined;
    drop = pg?.drop;
    const env = {
      MAIL_URL: smtp.url,
      PUBLIC_URL: publicUrl,
      AUTH_SECRET: "a-shared-secret-of-at-least-32-characters!",
      ...(pg && { DATABASE_URL: pg.url, REDIS_URL: REDIS_URL as string }),
    };
    for (let i = 0; i < count; i++) apps.push(await testApp({ ...env, DATA_DIR: tempDir() }));
  });
  afterAll(async () => {
    for (const t of apps) await t.close();
    await smtp?.close();
    await drop?.();
  });
  return { apps, smtp: () => smtp as SmtpTestServer };
}

/**
 * Registers a beforeEach that gives each test of the block its own client address
 * (`${prefix}.1`, `.2`, …), so the per-IP limits (starts of a sign-in or link: 10 a minute) never
 * carry over from one test to the next. Browsers and sign-ins made inside a test come from it.
 */
export function clientPerTest(rig: AccountApp, publicUrl: string, prefix: string) {
  let client: AppLike;
  let n = 0;
  beforeEach(() => {
    const remoteAddress = `${prefix}.${++n}`;
    client = { request: (url, init) => rig.t.app.request(url, init, { incoming: { socket: { remoteAddress } } }) };
  });
  return {
    request: (url: string, init?: RequestInit) => client.request(url, init),
    browser: () => new FormAgent(client, publicUrl),
    signIn: (email: string) => signIn(client, publicUrl, rig.smtp, email),
  };
}
