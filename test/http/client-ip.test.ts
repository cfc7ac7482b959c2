import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, testServer } from "../helpers/app.js";

function ipSeen(t: TestServer, headers: Record<string, string>, localAddress = "127.0.0.1"): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: t.server.port, path: "/test/ip", headers, localAddress, agent: false },
      (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve(JSON.parse(body).ip));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe.each([
  ["no trusted proxy", "0", "127.0.0.2"],
  ["one trusted hop", "1", "198.51.100.7"],
  ["two trusted hops", "2", "203.0.113.1"],
])("client IP with %s", (_label, hops, expected) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await testServer({ TRUST_PROXY: hops });
    t.app.get("/test/ip", (c) => c.json({ ip: c.get("clientIp") }));
  });
  afterAll(() => t.close());

  it(`is ${expected}`, async () => {
    const ip = await ipSeen(t, { "X-Forwarded-For": "203.0.113.1, 198.51.100.7" }, "127.0.0.2");
    expect(ip).toBe(expected);
  });
});
