import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADERS_MAX } from "../src/http/contract.js";
import { readJsonBody } from "../src/http/json-body.js";
import { type TestServer, testServer } from "./helpers/app.js";
import { bodyOf, headerOf, keepAliveSocket, rawRequest } from "./helpers/raw-http.js";

const UUID = /^[0-9a-f-]{36}$/;

describe("HTTP core, over a real socket", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await testServer({ BODY_LIMIT_BYTES: "2048", HEADERS_TIMEOUT_MS: "1000", REQUEST_TIMEOUT_MS: "3000" });
    t.app.post("/test/echo", async (c) => c.json({ size: JSON.stringify(await readJsonBody(c, 2048)).length }));
  });
  afterAll(() => t.close());

  const port = () => t.server.port;

  it("413 for a chunked body that grows past the limit, and closes the connection", async () => {
    const chunk = `400\r\n${"x".repeat(0x400)}\r\n`;
    const res = await rawRequest(port(), [
      "POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
      ...Array.from({ length: 8 }, () => chunk),
      "0\r\n\r\n",
    ]);
    expect(res.status).toBe(413);
    expect(res.closedByServer).toBe(true);
    expect(headerOf(res.text, "Connection")).toBe("close");
    expect(headerOf(res.text, "X-Request-Id")).toMatch(UUID);
    expect(JSON.parse(bodyOf(res.text)).error.code).toBe("payload_too_large");
  });

  it("413 for an announced Content-Length over the limit, without waiting for the body", async () => {
    const res = await rawRequest(
      port(),
      [
        "POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n",
        "[",
      ],
      5000,
    );
    expect(res.status).toBe(413);
    expect(
      JSON.parse(
        bodyOf(res.text)
          .split("\r\n")
          .find((l) => l.startsWith("{")) ?? bodyOf(res.text),
      ).error.code,
    ).toBe("payload_too_large");
  });

  it("a body under the limit in chunks is accepted", async () => {
    const json = JSON.stringify(["a", "b"]);
    const res = await rawRequest(port(), [
      "POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    ]);
    expect(res.status).toBe(200);
  });

  describe("classify reads its body off the socket (raw-body) under the same cap", () => {
    let auth = "";
    beforeAll(async () => {
      auth = `Authorization: Bearer ${(await t.deps.keys.create({ name: "socket", permissions: ["vibe.classify"] })).key}\r\n`;
    });
    const head = (framing: string) =>
      `POST /v1/vibe/classify HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n${framing}\r\n`;

    it("413 for a chunked body that grows past the limit, and closes the connection", async () => {
      const chunk = `400\r\n${"x".repeat(0x400)}\r\n`;
      const res = await rawRequest(port(), [
        head("Transfer-Encoding: chunked\r\n"),
        ...Array.from({ length: 8 }, () => chunk),
        "0\r\n\r\n",
      ]);
      expect(res.status).toBe(413);
      expect(res.closedByServer).toBe(true);
      expect(JSON.parse(bodyOf(res.text)).error).toMatchObject({
        code: "payload_too_large",
        message: "Request body is larger than 2048 bytes.",
      });
    });

    it("413 for an announced Content-Length over the limit, without waiting for the body", async () => {
      const res = await rawRequest(port(), [head("Content-Length: 10000000\r\n"), "["], 5000);
      expect(res.status).toBe(413);
      expect(bodyOf(res.text)).toContain('"payload_too_large"');
    });

    it.each(["Content-Length", "chunked"] as const)(
      "a body of exactly BODY_LIMIT_BYTES is read (%s); one byte more is 413",
      async (framing) => {
        const body = (size: number) => JSON.stringify(["a".repeat(size - 4)]);
        const send = (json: string) =>
          rawRequest(
            port(),
            framing === "chunked"
              ? [
                  head("Transfer-Encoding: chunked\r\nConnection: close\r\n"),
                  `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
                ]
              : [head(`Content-Length: ${json.length}\r\nConnection: close\r\n`), json],
          );
        expect(body(2048)).toHaveLength(2048);
        const at = await send(body(2048));
        expect(at.status).toBe(200);
        const over = await send(body(2049));
        expect(over.status).toBe(413);
        expect(JSON.parse(bodyOf(over.text)).error).toMatchObject({
          code: "payload_too_large",
          message: "Request body is larger than 2048 bytes.",
        });
      },
    );

    it("a chunked body under the limit is classified; a body that is not JSON is 400", async () => {
      const json = JSON.stringify({ texts: ["I love it", "I hate it"] });
      const ok = await rawRequest(port(), [
        head("Transfer-Encoding: chunked\r\nConnection: close\r\n"),
        `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
      ]);
      expect(ok.status).toBe(200);
      const labels = (JSON.parse(bodyOf(ok.text)) as { results: { label: string }[] }).results.map((r) => r.label);
      expect(labels).toEqual(["positive", "negative"]);
      const bad = await rawRequest(port(), [head("Content-Length: 5\r\nConnection: close\r\n"), "{nope"]);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bodyOf(bad.text)).error).toMatchObject({
        code: "invalid_body",
        message: "Request body must be JSON.",
      });
    });
  });

  it("cuts a client that never finishes its headers, with a 408 in the error shape", async () => {
    const res = await rawRequest(port(), ["GET /healthz HTTP/1.1\r\nHost: x\r\n", { delayMs: 8000 }], 8000);
    expect(res.closedByServer).toBe(true);
    expect(res.status).toBe(408);
    expect(headerOf(res.text, "X-Request-Id")).toMatch(UUID);
    expect(JSON.parse(bodyOf(res.text)).error.code).toBe("request_timeout");
  });

  /** An answer in the one error shape with its X-Request-Id, on a connection the server closed. */
  const expectShaped = (res: { text: string; status: number | null; closedByServer: boolean }, status: number) => {
    expect(res.status).toBe(status);
    expect(res.closedByServer).toBe(true);
    const id = headerOf(res.text, "X-Request-Id");
    expect(id).toMatch(UUID);
    expect(headerOf(res.text, "Content-Type")).toBe("application/json");
    const body = JSON.parse(bodyOf(res.text));
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error.request_id).toBe(id);
    return body.error as { code: string; message: string };
  };

  it.each([
    ["no Host", "GET /healthz HTTP/1.1\r\n\r\n", "the Host header is missing"],
    ["a Host with a space", "GET /v1/moon HTTP/1.1\r\nHost: exa mple\r\n\r\n", "the Host header is not a host name"],
    ["a Host with a path", "GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n", "the Host header is not a host name"],
    ["two Host headers", "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "the Host header is repeated"],
    ["a * target", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", "the target must be a path"],
    ["a backslash in the path", "GET /v1\\moon HTTP/1.1\r\nHost: x\r\n\r\n", "Backslash in request path"],
  ])("%s → 400 invalid_body in the error shape, connection closed", async (_name, request, why) => {
    const error = expectShaped(await rawRequest(port(), [request]), 400);
    expect(error).toEqual(
      expect.objectContaining({ code: "invalid_body", message: `Malformed HTTP request: ${why}.` }),
    );
  });

  // Node's parser counts the request line with the headers (16 KiB): a very long query string is
  // refused the same way as a very long header, 431 in the error shape (docs/api.md "Every response").
  it.each([
    ["a query string of 20,000 characters", `GET /v1/moon?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ["a header of 20,000 characters", `GET /v1/moon HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`],
  ])("%s → 431 headers_too_large in the error shape, connection closed", async (_name, request) => {
    const res = await rawRequest(port(), [request]);
    const error = expectShaped(res, 431);
    expect(error).toEqual(
      expect.objectContaining({ code: "headers_too_large", message: "Request headers are too large." }),
    );
    // As the document's `default` answer declares for every error.
    expect(headerOf(res.text, "Cache-Control")).toBe("no-store");
    expect(headerOf(res.text, "Access-Control-Allow-Origin")).toBe("*");
    expect(headerOf(res.text, "Access-Control-Expose-Headers")).toContain("X-Request-Id");
  });

  it("an If-None-Match as long as the document allows is served; one longer is a 400, not a 431", async () => {
    const send = (length: number) =>
      rawRequest(port(), [
        `GET /v1/moon?date=2024-01-25 HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${"a".repeat(length)}\r\nConnection: close\r\n\r\n`,
      ]);
    expect((await send(HEADERS_MAX)).status).toBe(200);
    const longer = await send(HEADERS_MAX + 1);
    expect(longer.status).toBe(400);
    expect(JSON.parse(bodyOf(longer.text)).error.message).toMatch(/^header "If-None-Match" is invalid/);
  });

  it("a query string of 8,000 characters is served", async () => {
    const res = await rawRequest(port(), [
      `GET /v1/moon?date=2024-01-25&x=${"a".repeat(8000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    ]);
    expect(res.status).toBe(200);
  });

  it("CONNECT → 400 in the error shape before the connection closes", async () => {
    const res = await rawRequest(port(), ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"]);
    expect(expectShaped(res, 400).code).toBe("invalid_body");
  });

  it("a malformed chunk size → 400 in the error shape", async () => {
    const res = await rawRequest(port(), [
      "POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
      "zz\r\nabc\r\n",
    ]);
    expect(expectShaped(res, 400)).toMatchObject({ code: "invalid_body", message: "Malformed HTTP request." });
  });

  it("a body that stops coming → 408 request_timeout in the error shape (REQUEST_TIMEOUT_MS)", async () => {
    const res = await rawRequest(
      port(),
      ["POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", '{"a":'],
      10_000,
    );
    expect(expectShaped(res, 408).code).toBe("request_timeout");
  });

  it("what is well-formed still passes: host:port, an IPv6 literal, absolute-form, HTTP/1.0 with a Host", async () => {
    for (const request of [
      "GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\nConnection: close\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n",
      "GET http://x/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n",
    ]) {
      expect((await rawRequest(port(), [request])).status).toBe(200);
    }
  });

  it("answers a malformed request line with 400 in the error shape", async () => {
    const res = await rawRequest(port(), ["BLAH\r\n\r\n"]);
    expect(res.status).toBe(400);
    expect(headerOf(res.text, "X-Request-Id")).toMatch(UUID);
    expect(JSON.parse(bodyOf(res.text)).error.code).toBe("invalid_body");
  });
});

describe("kept-alive sockets", () => {
  it("a client that reuses a socket within the advertised Keep-Alive timeout is always answered", async () => {
    const t = await testServer({ KEEP_ALIVE_TIMEOUT_MS: "3000" });
    try {
      const socket = await keepAliveSocket(t.server.port);
      const request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      const first = await socket.send(request);
      const advertised = Number(/timeout=(\d+)/.exec(headerOf(first.head, "Keep-Alive") ?? "")?.[1]);
      expect(advertised).toBeGreaterThan(0);
      // Idle for all the header allows, and more: a client's idle timer may fire a second late
      // (undici's are that coarse) or later on a busy event loop.
      await new Promise((r) => setTimeout(r, advertised * 1000 + 1200));
      expect((await socket.send(request)).status).toBe(200);
      socket.destroy();
    } finally {
      await t.close();
    }
  });
});

describe("graceful close", () => {
  it("finishes in-flight requests, then refuses new connections", async () => {
    const t = await testServer();
    let arrived = 0;
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    t.app.get("/test/slow", async (c) => {
      arrived += 1;
      await released;
      return c.json({ ok: true });
    });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = request({ port: t.server.port, host: "127.0.0.1", path: "/test/slow", agent: false }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
    const inFlight = Array.from({ length: 20 }, get);
    while (arrived < 20) await new Promise((r) => setTimeout(r, 10));
    const closed = t.close();
    setTimeout(release, 200); // the close has begun while all 20 are in flight
    const statuses = await Promise.all(inFlight);
    expect(statuses).toEqual(Array(20).fill(200));
    await closed;
    await expect(get()).rejects.toThrow(/ECONNREFUSED/);
  });
});
