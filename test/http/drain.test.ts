import { afterEach, describe, expect, it } from "vitest";
import { DRAIN_QUIET_MS } from "../../src/http/drain.js";
import { type TestServer, testServer } from "../helpers/app.js";
import { expectErrorShape, send } from "../resilience/support.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refusedOrStatus = (url: string, opts: Parameters<typeof send>[1] = {}) =>
  send(url, { limitMs: 5000, ...opts }).then(
    (a) => a.status,
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );

// The drain between SIGTERM and exit (src/http/drain.ts, docs/scaling.md "Rolling restarts"):
// the listener stays open until connections stop arriving, so none queued in the kernel is reset
// under a request a balancer already sent; what a balancer may retry is refused before any work.
describe("draining: the listener stays open until connections stop arriving", () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("a new GET is refused 503 before any work, a new POST is served, readyz says draining; then the listener closes", async () => {
    t = await testServer({ SHUTDOWN_TIMEOUT_MS: "20000" });
    const doc = JSON.parse((await send(`${t.url}/v1/openapi.json`)).body) as {
      paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    const closed = t.server.close();
    let done = false;
    void closed.then(() => {
      done = true;
    });

    const get = await send(`${t.url}/v1/moon?date=2024-01-01`);
    expect(get.status).toBe(503);
    expect(get.headers.connection).toBe("close");
    expect(get.headers["retry-after"]).toBe("1");
    expectErrorShape(503, get.body, get.headers["x-request-id"] as string);
    expect(JSON.parse(get.body).error.code).toBe("unavailable");
    // A page calling the API can read the refusal; and the document declares every header it has.
    expect(get.headers["access-control-allow-origin"]).toBe("*");
    const declared = Object.keys(doc.paths["/v1/moon"]?.get.responses["503"]?.headers ?? {}).map((h) =>
      h.toLowerCase(),
    );
    const protocol = ["content-type", "content-length", "connection", "date"];
    expect(Object.keys(get.headers).filter((h) => !protocol.includes(h) && !declared.includes(h))).toEqual([]);

    // A POST must not be retried once sent, so it reaches the app (here: 401, no key).
    const post = await send(`${t.url}/v1/vibe/classify`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ texts: ["hi"] }),
    });
    expect(post.status).toBe(401);
    expect(post.headers.connection).toBe("close");

    const ready = await send(`${t.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: "not_ready", checks: { shutdown: "draining" } });
    expect((await send(`${t.url}/healthz`)).status).toBe(200);

    // Connections stop: after DRAIN_QUIET_MS without one, the listener closes and the drain ends.
    await sleep(DRAIN_QUIET_MS + 300);
    expect(await refusedOrStatus(`${t.url}/healthz`)).toBe("ECONNREFUSED");
    await closed;
    expect(done).toBe(true);
  });

  it("while connections keep arriving it keeps accepting, up to half the shutdown deadline", async () => {
    t = await testServer({ SHUTDOWN_TIMEOUT_MS: "4000" });
    const began = performance.now();
    const closed = t.server.close();
    const seen: (number | string)[] = [];
    // A connection every 100 ms for 3 × DRAIN_QUIET_MS: never quiet, so never closed under one.
    while (performance.now() - began < 3 * DRAIN_QUIET_MS) {
      seen.push(await refusedOrStatus(`${t.url}/healthz`));
      await sleep(100);
    }
    expect(new Set(seen)).toEqual(new Set([200]));
    // At 2 s (half of 4 s) it closes even so.
    await sleep(Math.max(0, 2000 - (performance.now() - began)) + 300);
    expect(await refusedOrStatus(`${t.url}/healthz`)).toBe("ECONNREFUSED");
    await closed;
  });
});
