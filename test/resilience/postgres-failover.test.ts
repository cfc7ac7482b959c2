import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../helpers/app.js";
import { REDIS_URL, skippedBecause, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { authSecret } from "../scale/support.js";
import { Haproxy, hasHaproxy } from "../support/haproxy.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import { PrivatePostgres, privatePostgresUnavailable } from "./private-postgres.js";
import { chargesPerKey, type LoadKey, MixedLoad, mailsPerMessage, summarise, timeline } from "./support/mixed-load.js";

const PUBLIC_URL = "http://localhost:8080";
/** Operations started per second over both instances. */
const RATE = Number(process.env.FAILOVER_RATE ?? 100);
/** Load before the primary stops, and after the promoted replica is up. */
const BEFORE_MS = 6000;
const AFTER_MS = 10_000;
/** How long "detecting" the failure takes before the replica is promoted (an operator or a failover manager). */
const DETECT_MS = 1000;
/** Each load key's uses: what it was charged is this less what it has left. */
const USES = 5;
const SLOW_START = { startTimeoutMs: 60_000 };

const why =
  privatePostgresUnavailable() ??
  (!hasHaproxy ? "no /usr/sbin/haproxy (Debian's haproxy)" : !REDIS_URL ? "REDIS_URL not set" : undefined);
if (why) console.warn(`PostgreSQL failover suite skipped: ${why}`);

describe.skipIf(Boolean(why))(
  `a PostgreSQL primary switch behind HAProxy under mixed load over two instances${skippedBecause(Boolean(why), why ?? "")}`,
  () => {
    let primary: PrivatePostgres;
    let replica: PrivatePostgres;
    let proxy: Haproxy;
    let smtp: SmtpTestServer;
    let instances: ServerProcess[] = [];
    let url = "";
    let keys: LoadKey[] = [];
    let created = 0;

    beforeAll(async () => {
      primary = await PrivatePostgres.create();
      const admin = new pg.Client({ connectionString: primary.url });
      await admin.connect();
      await admin.query("create role haproxy_check login");
      replica = await primary.replica();
      // Commits wait for the replica's flush: what a client was told is done survives the primary's loss.
      await admin.query("alter system set synchronous_standby_names = '*'");
      await admin.query("select pg_reload_conf()");
      await admin.end();
      proxy = await Haproxy.start([primary.port, replica.port]);
      // HAProxy counts every server up until its first checks: wait until the standby is out.
      await proxy.until(2, "DOWN");
      url = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`;
      smtp = await startSmtpServer();
      const env = {
        DATABASE_URL: url,
        REDIS_URL: REDIS_URL as string,
        MAIL_URL: smtp.url,
        PUBLIC_URL,
        AUTH_SECRET: authSecret(),
        DEMO_HOURLY_LIMIT: "1000000",
        CONTACT_HOURLY_LIMIT: "1000000",
        CONTACT_DAILY_CAP: "1000000",
      };
      instances = await Promise.all([
        spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START),
        spawnServer({ ...env, DATA_DIR: tempDir() }, SLOW_START),
      ]);
      // One key per keyed operation, made through the proxy before the load.
      const maker = await testApp({ DATABASE_URL: url });
      try {
        const needed = Math.ceil(((BEFORE_MS + DETECT_MS + AFTER_MS + 5000) * RATE * 0.5) / 1000);
        for (let i = 0; i < needed; i += 50) {
          const made = await Promise.all(
            Array.from({ length: Math.min(50, needed - i) }, () =>
              maker.deps.keys.create({ name: "failover", permissions: ["vibe.classify"], remaining: USES }),
            ),
          );
          keys.push(...made.map((k) => ({ id: k.id, key: k.key })));
        }
      } finally {
        await maker.close();
      }
      created = keys.length;
    }, 180_000);

    afterAll(async () => {
      await Promise.all(instances.map((s) => stop(s)));
      await proxy?.stop();
      await smtp?.close();
      replica?.destroy();
      primary?.destroy();
      keys = [];
    });

    it("the primary stops and the replica is promoted: ≤ 10 s of 503s with Retry-After, every key charged once, every message mailed once", async () => {
      const pids = instances.map((s) => s.proc.pid);
      // Warm: each instance serves each kind once (loads its modules) before the clock starts.
      const warm = new MixedLoad({
        instances: instances.map((s) => s.url),
        rate: 20,
        keys: keys.splice(0, 4),
        publicUrl: PUBLIC_URL,
      });
      warm.start();
      await new Promise((r) => setTimeout(r, 1000));
      const warmed = await warm.stop();
      console.info(
        `warm-up: ${warmed.operations.map((o) => `${o.kind} ${Math.round((o.attempts.at(-1)?.at ?? 0) - o.startedAt)} ms ${o.final}`).join(", ")}`,
      );
      const load = new MixedLoad({ instances: instances.map((s) => s.url), rate: RATE, keys, publicUrl: PUBLIC_URL });
      load.start();
      await new Promise((r) => setTimeout(r, BEFORE_MS));
      load.mark("primary stopped");
      primary.stop();
      await new Promise((r) => setTimeout(r, DETECT_MS));
      load.mark("promote");
      replica.promote();
      await proxy.until(2, "UP");
      load.mark("promoted node up behind haproxy");
      await new Promise((r) => setTimeout(r, AFTER_MS));
      const report = await load.stop();

      await new Promise((r) => setTimeout(r, 1000)); // the last mails' arrival at the desk
      const charges = await chargesPerKey(url, report.operations, USES);
      const mails = mailsPerMessage(smtp.messages, report.operations);
      const figures = summarise(report, charges, mails);
      const readyz = await Promise.all(instances.map(async (s) => (await fetch(`${s.url}/readyz`)).status));
      const served503 = await Promise.all(
        instances.map(async (s) =>
          [
            ...(await (await fetch(`${s.url}/metrics`)).text()).matchAll(
              /^http_requests_total\{[^}]*status="503"[^}]*\} (\d+)/gm,
            ),
          ].reduce((n, m) => n + Number(m[1]), 0),
        ),
      );
      const switched = proxy
        .log()
        .split("\n")
        .filter((l) => /^Server postgres\/pg\d is (UP|DOWN)/.test(l));
      console.info(
        `postgres failover: ${JSON.stringify({ ...figures, window: report.errorWindow, marks: report.marks, byKind: report.byKind, readyz, served503, switched })}\n${timeline(report).join("\n")}\nerrors: ${report.operations.flatMap((o) => o.attempts.filter((a) => a.status === "error").map((a) => `${o.kind} i${a.instance} ${Math.round(a.sentAt)}→${Math.round(a.at)} ${a.code}`)).join("; ")}`,
      );

      expect(report.violations).toEqual([]);
      expect(report.unfinished.map((o) => `${o.kind} #${o.id}: ${o.attempts.map((a) => a.status).join(" ")}`)).toEqual(
        [],
      );
      expect(report.errorWindow?.ms ?? 0).toBeLessThanOrEqual(10_000);
      // Every keyed classify call and contact message reached 200 within the client's 60 s.
      const notOk = report.operations.filter((o) => (o.kind === "classify" || o.kind === "contact") && o.final !== 200);
      expect(
        notOk.map((o) => `${o.kind} #${o.id}: ${o.attempts.map((a) => `${a.status} ${a.code ?? ""}`).join(", ")}`),
      ).toEqual([]);
      expect(figures.classify.slowestMs).toBeLessThan(60_000);
      // Charged exactly once each, never twice, never free; mailed exactly once each.
      expect(figures.classify.charged).toEqual({ "1": figures.classify.operations });
      expect(figures.contact.mailed).toEqual({ "1": figures.contact.operations });
      // Recovered without a restart: the same processes, ready.
      expect(instances.map((s) => s.proc.pid)).toEqual(pids);
      expect(instances.map((s) => s.proc.exitCode)).toEqual([null, null]);
      expect(readyz).toEqual([200, 200]);
      // No key state lost: every key made before the switch is on the promoted node.
      const promoted = new pg.Client({ connectionString: url });
      await promoted.connect();
      const stored = await promoted.query<{ n: string }>("select count(*) as n from api_keys");
      await promoted.end();
      expect(Number(stored.rows[0]?.n)).toBe(created);
    }, 240_000);
  },
);
