import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { advertisedKeepAliveSec } from "../../src/server.js";
import { REDIS_URL, skipReason, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { bodyOf, headerOf, rawRequest } from "../helpers/raw-http.js";
import { freePort } from "../helpers/redis-server.js";
import { hasIpv6Loopback, hasNginx, Nginx } from "../support/nginx.js";
import { call, clearDemoCounter, uniqueLoopback, verdicts } from "./support.js";

const DEMO_LIMIT = 6;
const DEMO_PATH = "/v1/holidays?country=GB&year=2024";
const NGINX_REQUEST_ID = /^[0-9a-f]{32}$/;

/** Requests the instance at `base` counted on the holidays route (its own /metrics). */
async function servedBy(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return [...text.matchAll(/^http_requests_total\{[^}]*route="\/v1\/holidays"[^}]*\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

/** An answer nginx wrote itself: the API's error shape, JSON, and nginx's request id. */
function expectNginxError(raw: string, status: number, code: string) {
  expect(raw).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(headerOf(raw, "Content-Type")).toBe("application/json");
  const id = headerOf(raw, "X-Request-Id") ?? "";
  expect(id).toMatch(NGINX_REQUEST_ID);
  const body = JSON.parse(bodyOf(raw));
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error).toMatchObject({ code, request_id: id });
  expect(typeof body.error.message).toBe("string");
}

// The compose topology with plain processes: the repository's nginx.conf in front of two
// instances sharing Redis, TRUST_PROXY=1 on the apps.
describe.skipIf(!hasNginx || !REDIS_URL)(
  `behind nginx (deploy/nginx.conf) ${hasNginx ? (skipReason({ redis: true }) ?? "") : "skipped: nginx is not installed (.ci/run installs nginx-light)"}`,
  { timeout: 120_000 },
  () => {
    let a: ServerProcess;
    let b: ServerProcess;
    let lb: Nginx;

    beforeAll(async () => {
      const env = { REDIS_URL: REDIS_URL as string, TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: String(DEMO_LIMIT) };
      [a, b] = await Promise.all([
        spawnServer({ ...env, DATA_DIR: tempDir() }, { startTimeoutMs: 60_000 }),
        spawnServer({ ...env, DATA_DIR: tempDir() }, { startTimeoutMs: 60_000 }),
      ]);
      lb = await Nginx.start([a.port, b.port]);
    }, 120_000);

    afterAll(async () => {
      await lb?.stop();
      await Promise.all([stop(a), stop(b)]);
    });

    it("spreads calls over both instances; the demo tier counts the real client, whatever X-Forwarded-For it forges", async () => {
      const client = uniqueLoopback();
      const other = uniqueLoopback();
      await clearDemoCounter(REDIS_URL as string, client);
      await clearDemoCounter(REDIS_URL as string, other);
      const before = (await servedBy(a.url)) + (await servedBy(b.url));
      const answers = [];
      for (let i = 0; i <= DEMO_LIMIT; i++) {
        // A client trying to look like someone new on every call.
        answers.push(
          await call(lb.url, DEMO_PATH, { localAddress: client, headers: { "X-Forwarded-For": `203.0.113.${i + 1}` } }),
        );
      }
      expect(verdicts(answers)).toEqual([...Array<string>(DEMO_LIMIT).fill("200"), "429 DEMO_HOURLY_LIMIT"]);
      expect(answers.map((r) => r.headers.ratelimit)).toEqual([
        ...Array.from({ length: DEMO_LIMIT }, (_, i) =>
          expect.stringMatching(`^"demo";r=${DEMO_LIMIT - 1 - i};t=\\d+$`),
        ),
        expect.stringMatching(/^"demo";r=0;t=\d+$/),
      ]);
      const refused = answers[DEMO_LIMIT];
      expect(refused?.headers["retry-after"]).toMatch(/^\d+$/);
      // The app's own answer passes through: its request id, not nginx's.
      expect(refused?.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(refused?.body.error?.message).toBeTruthy();

      // Both instances served some of them (round robin), and another client is unaffected.
      const [byA, byB] = [await servedBy(a.url), await servedBy(b.url)];
      expect(byA).toBeGreaterThan(0);
      expect(byB).toBeGreaterThan(0);
      expect(byA + byB - before).toBe(DEMO_LIMIT + 1);
      expect((await call(lb.url, DEMO_PATH, { localAddress: other })).status).toBe(200);
    });

    it.skipIf(!hasIpv6Loopback)(
      "listens on IPv6 too, and passes an IPv6 client's address: the demo tier counts it by its /64 (skipped without ::1)",
      async () => {
        // Every call here comes from ::1, so the app, trusting nginx's X-Forwarded-For, counts ::/64.
        await clearDemoCounter(REDIS_URL as string, "::/64");
        const answers = [];
        for (let i = 0; i <= DEMO_LIMIT; i++) {
          answers.push(
            await call(lb.url6, DEMO_PATH, {
              localAddress: "::1",
              headers: { "X-Forwarded-For": `2001:db8::${i + 1}` },
            }),
          );
        }
        expect(verdicts(answers)).toEqual([...Array<string>(DEMO_LIMIT).fill("200"), "429 DEMO_HOURLY_LIMIT"]);
        // An IPv4 client is counted apart.
        const v4 = uniqueLoopback();
        await clearDemoCounter(REDIS_URL as string, v4);
        expect((await call(lb.url, DEMO_PATH, { localAddress: v4 })).status).toBe(200);
      },
    );

    it("a body over the app's limit gets the app's 413; over nginx's backstop, nginx's 413 in the same shape", async () => {
      const post = (length: number, body = "", timeoutMs?: number) =>
        rawRequest(
          lb.port,
          [
            `POST /v1/mail/contact HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`,
            body,
          ],
          timeoutMs,
        );
      // Over BODY_LIMIT_BYTES (256 KiB), under nginx's 1m: nginx buffers it whole, then the app refuses it.
      const app = await post(300 * 1024, "x".repeat(300 * 1024));
      expect(app.status).toBe(413);
      expect(headerOf(app.text, "X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(bodyOf(app.text)).error.code).toBe("payload_too_large");

      // Over nginx's backstop: refused on the announced length, before any of it is read. nginx
      // then lingers up to 5 s for the body before closing; the answer is complete long before.
      expectNginxError((await post(2 * 1024 * 1024, "", 2000)).text, 413, "payload_too_large");
    });

    it("headers nginx will not take → 431 headers_too_large in the API's shape", async () => {
      const res = await rawRequest(lb.port, [
        `GET /v1/moon HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Big: ${"x".repeat(16 * 1024)}\r\n\r\n`,
      ]);
      expectNginxError(res.text, 431, "headers_too_large");
    });

    it("with no instance answering → 503 unavailable in the API's shape, with Retry-After", async () => {
      const dead = await Nginx.start([await freePort(), await freePort()]);
      try {
        const res = await rawRequest(dead.port, [
          "GET /v1/moon HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        ]);
        expectNginxError(res.text, 503, "unavailable");
        expect(headerOf(res.text, "Retry-After")).toBe("2");
      } finally {
        await dead.stop();
      }
    });
  },
);

// docs/scaling.md "Rolling restarts": idle upstream connections are closed by nginx, never by an app
// under a request nginx is sending; a POST that reached an app is never sent again.
describe("deploy/nginx.conf agrees with the apps", () => {
  const conf = readFileSync(new URL("../../deploy/nginx.conf", import.meta.url), "utf8");

  it("its upstream idle timeout is at most the apps' Keep-Alive header and under their own", () => {
    const upstream = /upstream almanac \{([^}]*)\}/.exec(conf)?.[1] ?? "";
    const nginxSec = Number(/^\s*keepalive_timeout (\d+)s;/m.exec(upstream)?.[1]);
    const appMs = parseConfig({}).KEEP_ALIVE_TIMEOUT_MS;
    expect(upstream).toMatch(/^\s*keepalive \d+;/m);
    expect(nginxSec).toBeGreaterThan(0);
    expect(nginxSec).toBeLessThanOrEqual(advertisedKeepAliveSec(appMs));
    expect(nginxSec * 1000).toBeLessThan(appMs);
  });

  it("retries what was never delivered, and never a POST that reached an app", () => {
    const retries = /^\s*proxy_next_upstream ([^;]*);/m.exec(conf)?.[1]?.split(" ");
    expect(retries).toEqual(expect.arrayContaining(["error", "timeout", "http_502", "http_503"]));
    expect(retries).not.toContain("non_idempotent");
  });
});
