import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer } from "../helpers/process.js";
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
  it(`all ${IN_FLIGHT} in-flight weather requests complete with 200, new connections are refused, exit 0`, async () => {
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
    await new Promise((r) => setTimeout(r, 300));
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
