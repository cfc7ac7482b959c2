import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";
import { percentile, send } from "./support.js";

const HEADERS_TIMEOUT_MS = 2000;
/** The server checks deadlines about once a second; the rest is slack for a loaded 2-core box. */
const CLOSE_BY_MS = HEADERS_TIMEOUT_MS + 3000;
const SLOW = 200;
let server: ServerProcess;

beforeAll(async () => {
  server = await spawnServer({
    DATA_DIR: tempDir(),
    LOG_LEVEL: "silent",
    DEMO_HOURLY_LIMIT: "1000000",
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  });
});
afterAll(async () => {
  await stop(server);
});

/** A client that sends its request line, then one header byte every 300 ms, and never finishes. */
function slowClient(port: number): Promise<{ closedAfterMs: number; text: string }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket: Socket = connect(port, "127.0.0.1");
    let text = "";
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding("utf8");
    socket.on("connect", () => {
      socket.write("GET /v1/moon HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      timer = setInterval(() => socket.writable && socket.write("a"), 300);
    });
    socket.on("data", (d) => {
      text += d;
    });
    const done = () => {
      clearInterval(timer);
      resolve({ closedAfterMs: performance.now() - started, text });
    };
    socket.on("close", done);
    socket.on("error", () => socket.destroy());
    // Our own bound: a socket still open then is reported as never closed.
    setTimeout(() => socket.destroy(), CLOSE_BY_MS + 5000).unref();
  });
}

describe("slow-header clients against a real server", () => {
  it(`${SLOW} dribbling connections are cut by headersTimeout while normal GETs keep being answered`, async () => {
    const slow = Array.from({ length: SLOW }, () => slowClient(server.port));
    const latencies: number[] = [];
    const statuses: number[] = [];
    const until = Date.now() + HEADERS_TIMEOUT_MS + 1500;
    while (Date.now() < until) {
      const batch = await Promise.all(
        Array.from({ length: 5 }, () => send(`${server.url}/v1/moon?date=2024-01-25`, { limitMs: 10_000 })),
      );
      for (const a of batch) {
        statuses.push(a.status);
        latencies.push(a.ms);
      }
    }
    const cut = await Promise.all(slow);
    const closedBy = cut.map((c) => c.closedAfterMs);
    console.info(
      `slow clients: ${SLOW} slow sockets, ${latencies.length} normal GETs, p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; ` +
        `slow sockets closed after ${Math.min(...closedBy).toFixed(0)}–${Math.max(...closedBy).toFixed(0)} ms`,
    );
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(closedBy.filter((ms) => ms > CLOSE_BY_MS)).toEqual([]);
    // Cut by the server's header deadline (408 in the error shape, or a plain close), not by us.
    expect(cut.filter((c) => c.text !== "" && !c.text.startsWith("HTTP/1.1 408"))).toEqual([]);
  });
});
