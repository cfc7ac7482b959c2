import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import {
  type Answer,
  createAlmanacClient,
  DEFAULT_TIMEOUT_MS,
  isAlmanacError,
  type NotModified,
  parseRetryAfter,
  randomUuid,
  VERSION,
} from "../src/index.js";
import { backoffMs } from "../src/transport.js";

/**
 * What a real network does to a call, on scripted fetches and a local socket that never
 * answers: timeouts per attempt, an AbortSignal honoured during a wait, failed connections
 * retried with backoff, Retry-After read strictly, the UUID fallback and the User-Agent.
 */

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ok = (body: unknown = { name: "k" }, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status: 200,
    headers: { "content-type": "application/json", "x-request-id": "r", ...headers },
  });
const limited = (retryAfter: string) =>
  new Response(JSON.stringify({ error: { code: "rate_limited", message: "wait", request_id: "r" } }), {
    status: 429,
    headers: { "content-type": "application/json", "retry-after": retryAfter },
  });

/** A fetch that records each request and answers with `answer()`. */
const recorder = (answer: () => Response | Promise<Response>) => {
  const requests: Request[] = [];
  return {
    requests,
    fetch: async (request: Request) => {
      requests.push(request);
      return answer();
    },
  };
};

/** A socket server that reads requests and never answers (or sends headers, then stalls). */
let silent: Server;
let silentUrl: string;
beforeAll(async () => {
  silent = createServer((req, res) => {
    if (req.url?.startsWith("/v1/moon")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"phase":');
    }
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

describe("timeouts", () => {
  it("ends an attempt the server never answers with a timeout error", async () => {
    const c = createAlmanacClient({ baseUrl: silentUrl, timeoutMs: 300, maxRetries: 0 });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "timeout")).toBe(true);
    if (!isAlmanacError(e)) return;
    expect(e.status).toBe(0);
  });

  it("retries a timed-out GET up to maxRetries, even on a fetch that ignores its signal", async () => {
    const { requests, fetch } = recorder(() => new Promise<Response>(() => {}));
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", timeoutMs: 20, maxRetries: 1, fetch });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "timeout")).toBe(true);
    expect(requests).toHaveLength(2);
  });

  it("counts reading the body in the attempt: headers then silence is a timeout too", async () => {
    const c = createAlmanacClient({ baseUrl: silentUrl, maxRetries: 0 });
    const e = await c.get("/v1/moon", { timeoutMs: 300 }).catch((err: unknown) => err);
    expect(isAlmanacError(e, "timeout")).toBe(true);
  });

  it("takes timeoutMs and maxRetries per call over the client's", async () => {
    const { requests, fetch } = recorder(() => new Promise<Response>(() => {}));
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", timeoutMs: 60_000, maxRetries: 5, fetch });
    const e = await c.post("/v1/vibe/classify", { body: ["hi"], timeoutMs: 20, maxRetries: 0 }).catch((err) => err);
    expect(isAlmanacError(e, "timeout")).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it("has a documented default", () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
  });
});

describe("cancellation", () => {
  it("rejects with aborted as soon as the signal fires during a Retry-After wait", async () => {
    const requests: Request[] = [];
    const controller = new AbortController();
    const c = createAlmanacClient({
      baseUrl: "http://almanac.test",
      maxRetryDelayMs: 3_600_000,
      fetch: async (request) => {
        requests.push(request);
        setTimeout(() => controller.abort(), 10);
        return limited("3600");
      },
    });
    // Were the wait not cut short, this would still be pending an hour from now.
    const e = await c.get("/v1/usage", { signal: controller.signal }).catch((err: unknown) => err);
    expect(isAlmanacError(e, "aborted")).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it("aborts an attempt under way, and does not start one on an aborted signal", async () => {
    const controller = new AbortController();
    const c = createAlmanacClient({ baseUrl: silentUrl, maxRetries: 3 });
    const pending = c.get("/v1/usage", { signal: controller.signal }).catch((err: unknown) => err);
    setTimeout(() => controller.abort(), 20);
    expect(isAlmanacError(await pending, "aborted")).toBe(true);
    const { requests, fetch } = recorder(() => ok());
    const counting = createAlmanacClient({ baseUrl: silentUrl, fetch });
    const again = await counting.get("/v1/usage", { signal: controller.signal }).catch((err: unknown) => err);
    expect(isAlmanacError(again, "aborted")).toBe(true);
    expect(requests).toHaveLength(0);
  });
});

describe("failed connections", () => {
  /** Fails the first `failures` attempts as fetch does when a connection is refused or reset. */
  const flaky = (failures: number) => {
    const requests: Request[] = [];
    const f = async (request: Request) => {
      requests.push(request);
      if (requests.length <= failures) throw new TypeError("fetch failed", { cause: new Error("ECONNRESET") });
      return ok({ model: { provider: "x", name: "x", version: "1" }, labels: [], results: [], usage: { texts: 1 } });
    };
    return { requests, fetch: f };
  };

  it("retries a GET, and a POST with its one Idempotency-Key", async () => {
    const get = flaky(2);
    const a = await createAlmanacClient({ baseUrl: "http://almanac.test", fetch: get.fetch }).get("/v1/usage");
    expect(a.status).toBe(200);
    expect(get.requests).toHaveLength(3);
    const post = flaky(1);
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: post.fetch });
    await c.post("/v1/vibe/classify", { body: ["hi"] });
    expect(post.requests).toHaveLength(2);
    expect(new Set(post.requests.map((r) => r.headers.get("idempotency-key"))).size).toBe(1);
    expect(await post.requests[1]?.text()).toBe('["hi"]');
  });

  it("gives up after maxRetries with network_error", async () => {
    const f = flaky(10);
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: f.fetch, maxRetries: 1 });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "network_error")).toBe(true);
    expect(f.requests).toHaveLength(2);
  });

  it("backs off exponentially with jitter, capped", () => {
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(2, () => 1)).toBe(2000);
    expect(backoffMs(10, () => 1)).toBe(8000);
  });
});

describe("protocol details", () => {
  it("reads Retry-After strictly: a fraction as written, a negative or a word as unreadable", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("1.5")).toBe(1.5);
    expect(parseRetryAfter(" 3 ")).toBe(3);
    expect(parseRetryAfter("-1")).toBeNull();
    expect(parseRetryAfter("soon")).toBeNull();
    expect(parseRetryAfter("")).toBeNull();
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7);
  });

  it("does not retry at once on an unreadable Retry-After", async () => {
    const { requests, fetch } = recorder(() => limited("-1"));
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "rate_limited")).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it("makes an Idempotency-Key where crypto.randomUUID is missing (a plain-HTTP page)", async () => {
    expect(randomUuid({ getRandomValues: (a) => crypto.getRandomValues(a) })).toMatch(UUID_V4);
    const { requests, fetch } = recorder(() => ok());
    const real = globalThis.crypto;
    vi.stubGlobal("crypto", { getRandomValues: (a: Uint8Array<ArrayBuffer>) => real.getRandomValues(a) });
    try {
      const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch });
      await c.post("/v1/vibe/classify", { body: ["hi"] });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(requests[0]?.headers.get("idempotency-key")).toMatch(UUID_V4);
  });

  it("names itself and its version in User-Agent", async () => {
    const { requests, fetch } = recorder(() => ok());
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch });
    await c.get("/v1/usage");
    expect(requests[0]?.headers.get("user-agent")).toBe(
      `almanac-client-typescript/${VERSION} node/${process.versions.node}`,
    );
  });

  it("says when an answer was replayed", async () => {
    const c = createAlmanacClient({
      baseUrl: "http://almanac.test",
      fetch: async () => ok({}, { "idempotent-replayed": "true" }),
    });
    expect((await c.get("/v1/usage")).replayed).toBe(true);
  });

  it("types a 304 as no data, only when If-None-Match is sent", async () => {
    const c = createAlmanacClient({
      baseUrl: "http://almanac.test",
      fetch: async () => new Response(null, { status: 304, headers: { "x-request-id": "r", etag: '"a"' } }),
    });
    const plain = c.get("/v1/moon").catch(() => undefined);
    expectTypeOf(plain).resolves.not.toEqualTypeOf<NotModified | undefined>();
    const answer = await c.get("/v1/moon", { params: { header: { "If-None-Match": '"a"' } } });
    expectTypeOf(answer).toExtend<Answer<unknown> | NotModified>();
    expect(answer.notModified).toBe(true);
    expect(answer.status).toBe(304);
    expect(answer.data).toBeUndefined();
    if (!answer.notModified) expectTypeOf(answer.data.phase.key).toBeString();
    // @ts-expect-error data is possibly undefined until notModified is ruled out
    const unchecked = () => answer.data.phase;
    expect(unchecked).toThrow(TypeError);
  });
});

describe("types the server agrees with", () => {
  it("takes every zone name the server takes, and only the list words it knows", () => {
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: async () => ok() });
    // Compiled, not called: tsc (npm run check) holds these lines to the generated types.
    const calls = () => [
      c.get("/v1/moon", { params: { query: { tz: "Asia/Kolkata" } } }),
      c.get("/v1/sun", { params: { query: { lat: 0, lon: 0, tz: "Etc/UTC" } } }),
      c.get("/v1/holidays", { params: { query: { country: "GB", types: ["public", "bank"] } } }),
      c.get("/v1/holidays/working-days", { params: { query: { country: "DE", count: ["day_off"] } } }),
      // @ts-expect-error not a zone
      c.get("/v1/moon", { params: { query: { tz: "Mars/Olympus_Mons" } } }),
      // @ts-expect-error not a holiday type
      c.get("/v1/holidays", { params: { query: { country: "GB", types: ["nope"] } } }),
      // @ts-expect-error not a day-off rule
      c.get("/v1/holidays/working-days", { params: { query: { country: "DE", count: ["nope"] } } }),
    ];
    expect(typeof calls).toBe("function");
  });
});
