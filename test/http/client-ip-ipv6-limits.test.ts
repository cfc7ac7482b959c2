import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_IN_LIMITS } from "../../src/features/account/sign-in-limits.js";
import { type TestApp, testApp, watchedLimiter } from "../helpers/app.js";
import { FormAgent } from "../support/form-agent.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

/**
 * Beyond the demo tier (client-ip-ipv6.test.ts): the invalid-key throttle, the contact
 * desk's budget, the sign-in budgets and better-auth's own window count an IPv6 client by its
 * network (CLIENT_IPV6_PREFIX), through the trusted proxy's header; the log line keeps the full
 * address. Each limiter decision is recorded by rule, so every per-client rule is seen keyed by
 * the network, not only the ones a status shows.
 */

const PUBLIC_URL = "http://localhost:8080";
const NET = "2001:db8:1:2";

interface Rig {
  t: TestApp;
  smtp: SmtpTestServer;
  lines: Record<string, unknown>[];
  /** The keys each rule was consumed with. */
  keys: Map<string, Set<string>>;
  from(ip: string, path: string, init?: RequestInit): Response | Promise<Response>;
  close(): Promise<void>;
}

async function rig(env: Record<string, string> = {}): Promise<Rig> {
  const smtp = await startSmtpServer();
  const lines: Record<string, unknown>[] = [];
  const keys = new Map<string, Set<string>>();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const t = await testApp(
    {
      TRUST_PROXY: "1",
      MAIL_URL: smtp.url,
      PUBLIC_URL,
      GITHUB_CLIENT_ID: "gh-id",
      GITHUB_CLIENT_SECRET: "gh-secret",
      INVALID_KEY_LIMIT: "2",
      CONTACT_HOURLY_LIMIT: "2",
      DEMO_HOURLY_LIMIT: "1000",
      ...env,
    },
    (deps) => ({
      logger: pino({ level: "info" }, sink),
      limiter: watchedLimiter(deps.limiter, (rule, key) => {
        keys.set(rule.name, (keys.get(rule.name) ?? new Set()).add(key));
      }),
    }),
  );
  return {
    t,
    smtp,
    lines,
    keys,
    from: (ip, path, init = {}) =>
      t.app.request(path, { ...init, headers: { ...init.headers, "X-Forwarded-For": ip } }),
    close: async () => {
      await t.close();
      await smtp.close();
    },
  };
}

const contact = (r: Rig, ip: string) =>
  r.from(ip, "/v1/mail/contact", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Ada", email: "ada@example.com", message: "Hello, a question about VAT." }),
  });

/** The account page's code form, posted from `ip` (spends the sign-in check budget). */
const verify = (r: Rig, ip: string, email: string) =>
  new FormAgent({ request: (input, init) => r.from(ip, input, init) }, PUBLIC_URL).post("/account/verify", {
    email,
    code: "000000",
  });

/** better-auth's own JSON route for a code check, from `ip` (its own window: 3 in 10 s). */
/** A provider sign-in start: better-auth's window counts it (the code routes are Almanac's budgets'). */
const betterAuthStart = (r: Rig, ip: string) =>
  r.from(ip, "/api/auth/sign-in/social", {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
    body: JSON.stringify({ provider: "github", callbackURL: "/account" }),
  });

/** Status and error reason. */
const verdict = async (res: Response) =>
  `${res.status} ${((await res.json()) as { error?: { reason?: string } }).error?.reason ?? ""}`.trim();
const BETTER_AUTH_429 = "429";

describe("behind a trusted proxy, every per-client limit counts an IPv6 client by its /64", () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
  });
  afterAll(() => r.close());

  it("invalid-key throttle (limit 2): rejected keys from three addresses of one /64 → 401, 401, 429; another /64 → 401", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++)
      statuses.push(
        (await r.from(`${NET}::${i}`, "/v1/usage", { headers: { Authorization: `Bearer alm_guess${i}` } })).status,
      );
    expect(statuses).toEqual([401, 401, 429]);
    const other = await r.from("2001:db8:9:9::1", "/v1/usage", { headers: { Authorization: "Bearer alm_guess4" } });
    expect(other.status).toBe(401);
  });

  it("contact desk (2 an hour): three addresses of one /64 → 200, 200, 429; another /64 → 200", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) statuses.push((await contact(r, `${NET}::1${i}`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await contact(r, "2001:db8:9:9::1")).status).toBe(200);
  });

  it(`sign-in code checks (${SIGN_IN_LIMITS.check.perIp.points} an hour per client): one more from another address of the /64 is 429; another /64 is not`, async () => {
    const n = SIGN_IN_LIMITS.check.perIp.points;
    const statuses: number[] = [];
    // A new address of the /64 and a new e-mail address each time: only the per-client budget binds.
    for (let i = 0; i <= n; i++) statuses.push((await verify(r, `${NET}::a:${i}`, `guess${i}@example.test`)).status);
    expect(statuses.slice(0, n).filter((s) => s === 429)).toEqual([]);
    expect(statuses[n]).toBe(429);
    expect((await verify(r, "2001:db8:9:9::2", "guess-other@example.test")).status).not.toBe(429);
  });

  it("better-auth's own window: rapid provider sign-ins from addresses of one /64 meet its 429", async () => {
    // A /64 whose sign-in budget is untouched: the 429 is better-auth's window, not that budget.
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(await verdict(await betterAuthStart(r, `2001:db8:1:5::${i}`)));
    expect(answers).toContain(BETTER_AUTH_429);
  });

  it("the log line gives the full address (IPv4-mapped as IPv4); the limits count the network", async () => {
    const res = await r.from(`${NET}::abcd`, "/v1/moon?date=2024-01-25");
    const mapped = await r.from("::ffff:198.51.100.7", "/v1/moon?date=2024-01-25");
    const line = (res: Response) => r.lines.find((l) => l.request_id === res.headers.get("x-request-id"));
    expect(line(res)).toMatchObject({ msg: "request", status: 200, ip: `${NET}::abcd` });
    expect(line(mapped)).toMatchObject({ msg: "request", status: 200, ip: "198.51.100.7" });
    expect(r.keys.get("demo")).toContain("198.51.100.7");
  });

  // The invalid-key throttle holds its own reference to the limiter (deps.keys): its statuses above show it.
  it("each per-client rule was consumed with the /64 for IPv6 clients, never with one of its addresses", () => {
    for (const rule of ["contact", SIGN_IN_LIMITS.check.perIp.name, "demo"]) {
      const seen = [...(r.keys.get(rule) ?? [])];
      expect(seen, rule).toContain(`${NET}::/64`);
      expect(
        seen.filter((k) => k.includes(":") && !k.endsWith("/64")),
        rule,
      ).toEqual([]);
    }
  });
});

describe("CLIENT_IPV6_PREFIX=48: the limits count by the /48, better-auth's window included", () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig({ CLIENT_IPV6_PREFIX: "48" });
  });
  afterAll(() => r.close());

  it("contact desk: three /64s of one /48 → 200, 200, 429", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) statuses.push((await contact(r, `2001:db8:1:${i}::1`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect([...(r.keys.get("contact") ?? [])]).toEqual(["2001:db8:1::/48"]);
  });

  it("better-auth's window: rapid provider sign-ins from six /64s of one /48 meet its 429", async () => {
    const statuses: string[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await verdict(await betterAuthStart(r, `2001:db8:1:${i + 10}::1`)));
    expect(statuses).toContain(BETTER_AUTH_429);
  });
});
