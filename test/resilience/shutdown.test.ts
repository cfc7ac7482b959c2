import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRAIN_QUIET_MS } from "../../src/http/drain.js";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer } from "../helpers/process.js";
import { headerOf, keepAliveSocket } from "../helpers/raw-http.js";
import { fdsOf, send, settle } from "./support.js";

const IN_FLIGHT = 50;
let postcodes: UpstreamFake;
let meteo: UpstreamFake;
let server: ServerProcess;

beforeAll(async () => {
  postcodes = await fakePostcodesIo();
  meteo = await fakeOpenMeteo();
  server = await spawnServer({
    DATA_DIR: tempDir(),
    LOG_LEVEL: "silent",
    DEMO_HOURLY_LIMIT: "1000000",
    POSTCODES_BASE_URL: postcodes.url,
    OPEN_METEO_BASE_URL: meteo.url,
    UPSTREAM_TIMEOUT_MS: "10000",
    SHUTDOWN_TIMEOUT_MS: "15000",
  });
});
afterAll(async () => {
  if (server && server.proc.exitCode === null) server.proc.kill("SIGKILL");
  await Promise.all([postcodes?.close(), meteo?.close()]);
});

describe("SIGTERM with requests in flight", () => {
  it(`all ${IN_FLIGHT} in-flight weather requests complete with 200, new connections are refused once they stop arriving, exit 0`, async () => {
    const pid = server.proc.pid as number;
    const before = fdsOf(pid).sockets;
    // Open-Meteo holds its answers: every request waits on it (cold caches, one shared load).
    meteo.gate();
    const inFlight = Array.from({ length: IN_FLIGHT }, () =>
      send(`${server.url}/v1/weather?postcode=SW1A%202AA`, { limitMs: 30_000 }),
    );
    // All of them are accepted and waiting before the signal.
    const open = await settle(
      () => fdsOf(pid).sockets,
      (n) => n >= before + IN_FLIGHT,
    );
    expect(open).toBeGreaterThanOrEqual(before + IN_FLIGHT);
    await settle(
      () => meteo.requests.length,
      (n) => n > 0,
    );

    server.proc.kill("SIGTERM");
    // No connection arrives after the signal: the listener closes DRAIN_QUIET_MS later.
    await new Promise((r) => setTimeout(r, DRAIN_QUIET_MS + 500));
    const refused = await send(`${server.url}/healthz`, { limitMs: 5000 }).then(
      (a) => `answered ${a.status}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    expect(refused).toBe("ECONNREFUSED");
    await new Promise((r) => setTimeout(r, 200));
    meteo.release();

    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual(Array(IN_FLIGHT).fill(200));
    expect(JSON.parse(answers[0]?.body ?? "{}")).toHaveProperty("location");
    expect(await server.exited).toBe(0);
  });
});

describe("SIGTERM with kept-alive connections (drain)", () => {
  const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

  it("readyz 503 at once; every answer after the signal says Connection: close and its socket closes; exit 0 before the deadline", async () => {
    const drained = await spawnServer({
      DATA_DIR: tempDir(),
      LOG_LEVEL: "info",
      DEMO_HOURLY_LIMIT: "1000000",
      POSTCODES_BASE_URL: postcodes.url,
      OPEN_METEO_BASE_URL: meteo.url,
      UPSTREAM_TIMEOUT_MS: "10000",
      KEEP_ALIVE_TIMEOUT_MS: "3000",
      // Far beyond the test's own timeout: exiting at all means exiting because it was idle.
      SHUTDOWN_TIMEOUT_MS: "120000",
    });
    try {
      const busy = await keepAliveSocket(drained.port);
      const idle = await keepAliveSocket(drained.port);
      const ready = await keepAliveSocket(drained.port);
      const untouched = await keepAliveSocket(drained.port);
      for (const socket of [idle, ready, untouched]) {
        const before = await socket.send(GET("/healthz"));
        expect(headerOf(before.head, "Connection")).toBe("keep-alive");
      }
      // A weather answer held upstream: in flight on `busy` when the signal comes.
      const seen = meteo.requests.length;
      meteo.gate();
      const held = busy.send(GET("/v1/weather?postcode=SW1A%202AA"));
      await settle(
        () => meteo.requests.length,
        (n) => n > seen,
      );

      drained.proc.kill("SIGTERM");
      // The listener closes once no connection has come for DRAIN_QUIET_MS (src/http/drain.ts)…
      await new Promise((r) => setTimeout(r, DRAIN_QUIET_MS + 500));
      const refused = await send(`${drained.url}/healthz`, { limitMs: 2000 }).then(
        (a) => `answered ${a.status}`,
        (err: NodeJS.ErrnoException) => err.code ?? err.message,
      );
      expect(refused).toBe("ECONNREFUSED");

      // …readiness fails at once on a connection already open, and that connection closes after it.
      const notReady = await ready.send(GET("/readyz"));
      expect(notReady.status).toBe(503);
      expect(JSON.parse(notReady.body)).toEqual({ status: "not_ready", checks: { shutdown: "draining" } });
      expect(headerOf(notReady.head, "Connection")).toBe("close");
      await ready.closed;

      // A socket idle at the signal is not cut: a request on it is answered, then it closes.
      const late = await idle.send(GET("/healthz"));
      expect(late.status).toBe(200);
      expect(headerOf(late.head, "Connection")).toBe("close");
      await idle.closed;

      // The answer in flight at the signal completes, with Connection: close.
      meteo.release();
      const answer = await held;
      expect(answer.status).toBe(200);
      expect(headerOf(answer.head, "Connection")).toBe("close");
      await busy.closed;

      // The last one nobody uses closes at its keep-alive time, and the process exits: drained,
      // not cut at the deadline.
      await untouched.closed;
      expect(await drained.exited).toBe(0);
      expect(drained.output()).toContain('"msg":"drained"');
      expect(drained.output()).not.toContain("shutdown deadline");
    } finally {
      if (drained.proc.exitCode === null) drained.proc.kill("SIGKILL");
    }
  });
});
