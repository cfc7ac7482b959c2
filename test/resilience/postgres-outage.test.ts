import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unavailableMessage } from "../../src/http/key-auth.js";
import { signIn } from "../account/support.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { skippedBecause } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import { PrivatePostgres, privatePostgresUnavailable } from "./private-postgres.js";
import { expectErrorShape } from "./support.js";

const PUBLIC_URL = "http://almanac.test";
/** The promise: key and account routes answer 503 within 2 s; the rest is slack for a loaded machine. */
const ANSWER_WITHIN_MS = 2000;
const SLACK_MS = 1000;
/** DATABASE_TIMEOUT_MS's default: how long PostgreSQL may stay silent before calls fail. */
const SILENCE_MS = 1000;
const unavailable = privatePostgresUnavailable();
if (unavailable) console.warn(`PostgreSQL outage suite skipped: ${unavailable}`);

let pg: PrivatePostgres;
let smtp: SmtpTestServer;
let t: TestApp;
let key = "";
let agent: FormAgent;

async function timed(run: () => Response | Promise<Response>): Promise<{ res: Response; text: string; ms: number }> {
  const started = performance.now();
  const res = await Promise.race([
    Promise.resolve(run()),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("no answer in time")), ANSWER_WITHIN_MS + SLACK_MS),
    ),
  ]);
  const text = await res.text();
  return { res, text, ms: performance.now() - started };
}

const classify = () =>
  t.app.request("/v1/vibe/classify", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(["a good day"]),
  });

beforeAll(async () => {
  if (unavailable) return;
  pg = await PrivatePostgres.create();
  smtp = await startSmtpServer();
  t = await testApp({ DATABASE_URL: pg.url, MAIL_URL: smtp.url, PUBLIC_URL, DEMO_HOURLY_LIMIT: "1000000" });
  key = (await t.deps.keys.create({ name: "outage", permissions: ["vibe.classify"] })).key;
  agent = await signIn(t.app, PUBLIC_URL, smtp, "ada@example.test");
});

afterAll(async () => {
  await t?.close();
  await smtp?.close();
  pg?.destroy();
});

describe.skipIf(Boolean(unavailable))(
  `a private PostgreSQL stopped under a running app${skippedBecause(Boolean(unavailable), unavailable ?? "")}`,
  () => {
    it("lookups stay 200, key and account routes answer 503 within 2 s, /readyz not ready, then recovery", async () => {
      expect((await timed(classify)).res.status).toBe(200);
      expect((await agent.get("/account")).status).toBe(200);
      expect((await t.app.request("/readyz")).status).toBe(200);

      pg.stop();
      const worst: Record<string, number> = {};
      for (const path of ["/v1/moon?date=2024-01-25", "/v1/vat?code=DE", "/v1/holidays?country=GB&year=2024"]) {
        expect((await t.app.request(path)).status, path).toBe(200);
      }
      for (let i = 0; i < 3; i++) {
        const c = await timed(classify);
        expect(c.res.status).toBe(503);
        expect(expectErrorShape(c.res.status, c.text, c.res.headers.get("x-request-id"))).toBe("unkey_unavailable");
        worst.classify = Math.max(worst.classify ?? 0, c.ms);

        const a = await timed(() => agent.get("/account"));
        expect(a.res.status).toBe(503);
        expect(expectErrorShape(a.res.status, a.text, a.res.headers.get("x-request-id"))).toBe("unavailable");
        worst.account = Math.max(worst.account ?? 0, a.ms);

        const r = await timed(() => t.app.request("/readyz"));
        expect(r.res.status).toBe(503);
        expect(JSON.parse(r.text)).toEqual({ status: "not_ready", checks: { database: "down" } });
        worst.readyz = Math.max(worst.readyz ?? 0, r.ms);
      }
      console.info(
        `postgres outage: slowest answers (ms) ${JSON.stringify(worst, (_, v) => (typeof v === "number" ? Math.round(v) : v))}`,
      );
      for (const ms of Object.values(worst)) expect(ms).toBeLessThan(ANSWER_WITHIN_MS + SLACK_MS);

      // Back up: the pool reconnects, nothing is restarted, the session and the key still work.
      pg.start();
      expect((await t.app.request("/readyz")).status).toBe(200);
      expect((await timed(classify)).res.status).toBe(200);
      const page = await agent.get("/account");
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("ada@example.test");
    });
  },
);

/**
 * A TCP relay to `port` that holds every chunk, each way, for `delayMs`: a database that answers,
 * just slowly (a far or busy server), so a burst outlasts the pool by seconds.
 */
async function slowRelay(port: number, delayMs: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      s.on("close", () => sockets.delete(s));
    }
    const relay = (from: Socket, to: Socket) =>
      from.on("data", (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe.skipIf(Boolean(unavailable))(
  `a private PostgreSQL frozen (SIGSTOP: accepts, never answers)${skippedBecause(Boolean(unavailable), unavailable ?? "")}`,
  () => {
    let app: TestApp;
    let token = "";
    beforeAll(async () => {
      if (unavailable) return;
      // The default DATABASE_TIMEOUT_MS (1 s of silence).
      app = await testApp({ DATABASE_URL: pg.url, DEMO_HOURLY_LIMIT: "1000000" });
      token = (await app.deps.keys.create({ name: "frozen", permissions: ["vibe.classify"] })).key;
    });
    afterAll(async () => {
      pg?.thaw();
      await app?.close();
    });

    const classifyOn = (a: TestApp, ip: string) =>
      a.app.request(
        "/v1/vibe/classify",
        {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
          body: JSON.stringify(["a good day"]),
        },
        { incoming: { socket: { remoteAddress: ip } } },
      );

    it("20 concurrent classify calls and /readyz answer 503 within 2 s (the store named), a later call at once, then recover", async () => {
      expect((await classifyOn(app, "192.0.2.1")).status).toBe(200);
      pg.freeze();
      try {
        const calls = await Promise.all([
          ...Array.from({ length: 20 }, (_, i) => timed(() => classifyOn(app, `192.0.2.${i + 1}`))),
          timed(() => app.app.request("/readyz")),
        ]);
        const readyz = calls.pop();
        expect(readyz?.res.status).toBe(503);
        expect(JSON.parse(readyz?.text ?? "")).toEqual({ status: "not_ready", checks: { database: "down" } });
        for (const c of [...calls, readyz]) expect(c?.ms).toBeLessThan(ANSWER_WITHIN_MS);
        for (const c of calls) {
          expect(c.res.status).toBe(503);
          expect(expectErrorShape(c.res.status, c.text, c.res.headers.get("x-request-id"))).toBe("unkey_unavailable");
          expect(JSON.parse(c.text).error.message).toBe(unavailableMessage("embedded"));
        }
        // Known silent: a later call, and a keyed GET's second look, give up at once instead of
        // waiting out the silence again.
        const later = await timed(() => classifyOn(app, "192.0.2.99"));
        expect(later.res.status).toBe(503);
        expect(later.ms).toBeLessThan(SILENCE_MS);
      } finally {
        pg.thaw();
      }
      // Ready again as soon as the resumed database answers (a call meanwhile may still be refused).
      let ready = 0;
      for (let tries = 0; ready !== 200 && tries < 50; tries++) {
        if (tries > 0) await new Promise((r) => setTimeout(r, 100));
        ready = (await app.app.request("/readyz")).status;
      }
      expect(ready).toBe(200);
      expect((await classifyOn(app, "192.0.2.1")).status).toBe(200);
    });

    it("a burst of 900 classify calls through a slow but answering database queues: 900 × 200, no 503", async () => {
      const relay = await slowRelay(pg.port, 5);
      const url = new URL(pg.url);
      url.port = String(relay.port);
      const slow = await testApp({
        DATABASE_URL: url.toString(),
        DATABASE_POOL_SIZE: "4",
        DATABASE_ACQUIRE_TIMEOUT_MS: "120000",
        DEMO_HOURLY_LIMIT: "1000000",
      });
      try {
        const all = await Promise.all(
          Array.from({ length: 900 }, (_, i) => classifyOn(slow, `198.18.${i >> 8}.${i & 255}`)),
        );
        const counts: Record<number, number> = {};
        for (const r of all) counts[r.status] = (counts[r.status] ?? 0) + 1;
        expect(counts).toEqual({ 200: 900 });
      } finally {
        await slow.close();
        relay.close();
      }
    }, 180_000);
  },
);
