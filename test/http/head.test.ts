import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, testServer } from "../helpers/app.js";
import { bodyOf, rawRequest } from "../helpers/raw-http.js";

/**
 * HEAD on the lookups, over a real socket (RFC 9110 §9.3.2): the GET's status and header fields,
 * and not one byte of body — for an answer, a cached one, an error and an unknown path alike.
 */
let t: TestServer;
beforeAll(async () => {
  t = await testServer({ DEMO_HOURLY_LIMIT: "1000000" });
});
afterAll(() => t.close());

/** Header names of a raw answer, lower case, without those that differ per request or framing. */
function headerNames(raw: string): string[] {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).split("\r\n").slice(1);
  const skip = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive"]);
  return head
    .map((l) => l.slice(0, l.indexOf(":")).toLowerCase())
    .filter((n) => !skip.has(n))
    .sort();
}

const send = (method: string, path: string) =>
  rawRequest(t.server.port, [`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);

describe("HEAD answers like GET, without a body", () => {
  it.each([
    ["/v1/moon?date=2024-01-25", 200],
    ["/v1/moon?date=2024-01-25", 200], // the hot lane's reused answer
    ["/v1/sun?lat=51.5&lon=-0.1", 200],
    ["/v1/holidays?country=GB&year=2024", 200],
    ["/v1/vat?code=DE", 200],
    ["/v1/vat", 400],
    ["/v1/holidays?country=XX", 404],
    ["/v1/nope", 404],
    ["/v1/vibe/classify", 405],
  ])("%s → %i", async (path, status) => {
    const get = await send("GET", path);
    const head = await send("HEAD", path);
    expect(get.status).toBe(status);
    expect(head.status).toBe(status);
    expect(bodyOf(get.text).length).toBeGreaterThan(0);
    expect(bodyOf(head.text)).toBe("");
    expect(headerNames(head.text)).toEqual(headerNames(get.text));
  });
});
