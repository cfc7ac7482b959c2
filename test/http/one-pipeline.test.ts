import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, testServer } from "../helpers/app.js";

/**
 * The hot lane (answer cache on) and the app alone (ANSWER_CACHE_MB=0) must send the same full
 * header set for the same request: two servers, the same requests in the same order, every
 * header compared but `Date`. Values that differ between any two responses are compared by
 * shape: the request id (a fresh UUID), and the seconds until the window resets (`t=` in
 * RateLimit, Retry-After), which depend on when each server's window began.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function headerSet(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name === "date") return;
    if (name === "x-request-id") {
      expect(value).toMatch(UUID);
      out[name] = "<uuid>";
    } else if (name === "ratelimit") out[name] = value.replace(/;t=\d+$/, ";t=<seconds>");
    else if (name === "retry-after") out[name] = "<seconds>";
    else out[name] = value;
  });
  return out;
}

const seconds = (res: Response) => ({
  t: Number(/;t=(\d+)$/.exec(res.headers.get("ratelimit") ?? "")?.[1] ?? Number.NaN),
  retry: Number(res.headers.get("retry-after") ?? Number.NaN),
});

let lane: TestServer;
let app: TestServer;

beforeAll(async () => {
  [lane, app] = await Promise.all([
    testServer({ DEMO_HOURLY_LIMIT: "3" }),
    testServer({ DEMO_HOURLY_LIMIT: "3", ANSWER_CACHE_MB: "0" }),
  ]);
});
afterAll(async () => {
  await Promise.all([lane.close(), app.close()]);
});

async function both(path: string, init?: RequestInit): Promise<[Response, Response]> {
  const a = await fetch(`${lane.url}${path}`, init);
  const b = await fetch(`${app.url}${path}`, init);
  await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
  return [a, b];
}

async function reused(s: TestServer): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('http_answers_reused_total{route="/v1/moon"}'));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("the hot lane and the app send the same headers for the same request", () => {
  const path = "/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12";
  const origin = { Origin: "https://example.com" };

  it("CORS preflight", async () => {
    const [a, b] = await both(path, {
      method: "OPTIONS",
      headers: { ...origin, "Access-Control-Request-Method": "GET" },
    });
    expect(a.status).toBe(204);
    expect(b.status).toBe(204);
    expect(headerSet(a)).toEqual(headerSet(b));
  });

  it("a demo-tier 200 (both computed), then a cached 200 (the hot lane's) and a 304, then the 429", async () => {
    const [first, firstApp] = await both(path, { headers: origin });
    expect([first.status, firstApp.status]).toEqual([200, 200]);
    expect(headerSet(first)).toEqual(headerSet(firstApp));

    const before = await reused(lane);
    const [cached, computed] = await both(path, { headers: origin });
    expect(await reused(lane)).toBe(before + 1);
    expect([cached.status, computed.status]).toEqual([200, 200]);
    expect(headerSet(cached)).toEqual(headerSet(computed));

    const tag = first.headers.get("etag") ?? "";
    const [lane304, app304] = await both(path, { headers: { ...origin, "If-None-Match": tag } });
    expect(await reused(lane)).toBe(before + 2);
    expect([lane304.status, app304.status]).toEqual([304, 304]);
    expect(headerSet(lane304)).toEqual(headerSet(app304));

    const [lane429, app429] = await both(path, { headers: origin });
    expect([lane429.status, app429.status]).toEqual([429, 429]);
    expect(headerSet(lane429)).toEqual(headerSet(app429));
    for (const res of [cached, computed, lane429, app429]) expect(seconds(res).t).toBeGreaterThan(0);
    for (const res of [lane429, app429]) expect(seconds(res).retry).toBeGreaterThan(0);
  });
});
