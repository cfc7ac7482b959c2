import { Writable } from "node:stream";
import { LRUCache } from "lru-cache";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { normaliseTarget } from "../../src/http/answer-cache.js";
import { fakeOpenMeteo } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { errorOf, type TestServer, testServer, watchedLimiter } from "../helpers/app.js";

/** Headers that differ between any two responses whichever lane sent them. */
const PER_RESPONSE = new Set(["x-request-id", "ratelimit", "date", "connection", "keep-alive"]);

function stable(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!PER_RESPONSE.has(k)) out[k] = v;
  });
  return out;
}

async function reusedCount(s: TestServer, route: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`http_answers_reused_total{route="${route}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

const remaining = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1]);

let s: TestServer;
let postcodes: UpstreamFake;
let meteo: UpstreamFake;
let consumed = 0;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  postcodes = await fakePostcodesIo();
  meteo = await fakeOpenMeteo();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  s = await testServer(
    { POSTCODES_BASE_URL: postcodes.url, OPEN_METEO_BASE_URL: meteo.url, DEMO_HOURLY_LIMIT: "1000" },
    (deps) => ({
      logger: pino({ level: "info" }, sink),
      // Counts every demo-tier decision, whichever lane takes it.
      limiter: watchedLimiter(deps.limiter, (rule) => {
        if (rule.name === "demo") consumed++;
      }),
    }),
  );
});
afterAll(async () => {
  await s.close();
  await Promise.all([postcodes.close(), meteo.close()]);
});

const REUSED = [
  ["/v1/moon", "/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12"],
  ["/v1/sun", "/v1/sun?lat=51.5&lon=-0.1&date=2024-06-21"],
  ["/v1/holidays", "/v1/holidays?country=GB&year=2026"],
  ["/v1/holidays/working-days", "/v1/holidays/working-days?country=DE&date=2026-12-24&add=3"],
  ["/v1/vat", "/v1/vat?code=DE&date=2026-01-01"],
  ["/v1/vat", "/v1/vat?code=FR"],
  ["/v1/weather", "/v1/weather?postcode=SW1A2AA"],
] as const;

describe("the hot lane answers again what the app answered, with the same contract", () => {
  it.each(REUSED)("%s (%s): the same status, body and headers; counted, logged and measured", async (route, path) => {
    const before = await reusedCount(s, route);
    const counted = consumed;
    const first = await fetch(`${s.url}${path}`);
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    expect(await reusedCount(s, route)).toBe(before); // the app answered the first

    const second = await fetch(`${s.url}${path}`);
    expect(await reusedCount(s, route)).toBe(before + 1); // the hot lane the second
    expect(second.status).toBe(200);
    expect(await second.text()).toBe(firstBody);
    expect(stable(second)).toEqual(stable(first));
    expect(second.headers.get("content-length")).toBe(String(Buffer.byteLength(firstBody)));
    // Counted against the demo tier like the first: one decision each, the window shrinking by one.
    expect(consumed).toBe(counted + 2);
    expect(remaining(second)).toBe(remaining(first) - 1);
    // A fresh request id, and the log line the envelope (envelope.ts) writes for every request.
    const id = second.headers.get("x-request-id") ?? "";
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(id).not.toBe(first.headers.get("x-request-id"));
    const line = logLines.find((l) => l.request_id === id);
    expect(line).toMatchObject({ method: "GET", route, path: path.split("?")[0], status: 200, ip: "127.0.0.1" });
    expect(line?.duration_ms).toBeTypeOf("number");
  });

  it("a pinned lookup's 304 carries the same headers from either lane", async () => {
    const path = "/v1/moon?date=2025-06-02";
    const tag = (await fetch(`${s.url}/v1/moon?date=2025-06-02&x=1`)).headers.get("etag") ?? "";
    const viaApp = await fetch(`${s.url}${path}`, { headers: { "If-None-Match": tag } }); // 304s are not kept
    await fetch(`${s.url}${path}`); // now it is kept
    const before = await reusedCount(s, "/v1/moon");
    const viaLane = await fetch(`${s.url}${path}`, { headers: { "If-None-Match": `W/"other", ${tag}` } });
    expect(await reusedCount(s, "/v1/moon")).toBe(before + 1);
    for (const res of [viaApp, viaLane]) {
      expect(res.status).toBe(304);
      expect(await res.text()).toBe("");
      expect(res.headers.get("etag")).toBe(tag);
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(res.headers.get("ratelimit")).toBeTruthy();
      expect(res.headers.get("content-type")).toBeNull();
    }
    expect(stable(viaLane)).toEqual(stable(viaApp));
    // Another tag: the full answer.
    const full = await fetch(`${s.url}${path}`, { headers: { "If-None-Match": '"0000"' } });
    expect(full.status).toBe(200);
    expect(await full.json()).toHaveProperty("phase");
  });

  it("query order does not matter: one entry for ?a&b and ?b&a", async () => {
    await fetch(`${s.url}/v1/sun?date=2024-03-20&lat=40&lon=-3`);
    const before = await reusedCount(s, "/v1/sun");
    const res = await fetch(`${s.url}/v1/sun?lon=-3&lat=40&date=2024-03-20`);
    expect(res.status).toBe(200);
    expect(await reusedCount(s, "/v1/sun")).toBe(before + 1);
  });

  it("answers about 'now' (moon without a date) and errors are never reused", async () => {
    const before = await reusedCount(s, "/v1/moon");
    for (let i = 0; i < 2; i++) expect((await fetch(`${s.url}/v1/moon`)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${s.url}/v1/moon?lat=91&lon=0&date=2025-01-01`);
      expect((await errorOf(res)).error.code).toBe("invalid_body");
    }
    expect(await reusedCount(s, "/v1/moon")).toBe(before);
  });

  it("a request with a key goes to the app (the key is verified, never the demo tier)", async () => {
    const path = "/v1/vat?code=IT&date=2026-01-01";
    await fetch(`${s.url}${path}`);
    const before = await reusedCount(s, "/v1/vat");
    const res = await fetch(`${s.url}${path}`, { headers: { authorization: "Bearer sk_nope" } });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).error.reason).toBe("INVALID");
    expect(await reusedCount(s, "/v1/vat")).toBe(before);
  });
});

describe("the hot lane and the demo tier", () => {
  let small: TestServer;
  let decisions = 0;
  beforeAll(async () => {
    small = await testServer({ DEMO_HOURLY_LIMIT: "3" }, (deps) => ({
      limiter: {
        consume: (rule, key, points) => {
          if (rule.name === "demo") decisions++;
          return deps.limiter.consume(rule, key, points);
        },
        refund: (rule, key, points) => deps.limiter.refund(rule, key, points),
        reset: (rule, key) => deps.limiter.reset(rule, key),
        ready: () => deps.limiter.ready(),
        close: () => deps.limiter.close(),
      },
    }));
  });
  afterAll(() => small.close());

  it("a refused call is rendered by the app, in the one error shape, and counted once", async () => {
    const path = "/v1/holidays?country=FR&year=2026";
    const ok = [];
    for (let i = 0; i < 3; i++) ok.push((await fetch(`${small.url}${path}`)).status);
    expect(ok).toEqual([200, 200, 200]);
    expect(await reusedCount(small, "/v1/holidays")).toBe(2);
    const refused = await fetch(`${small.url}${path}`);
    expect(refused.status).toBe(429);
    const body = await errorOf(refused);
    expect(body.error.reason).toBe("DEMO_HOURLY_LIMIT");
    expect(body.error.message).toBe("Demo tier limit of 3 calls per hour reached; retry later or send an API key.");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit")).toMatch(/^"demo";r=0;t=\d+$/);
    expect(decisions).toBe(4);
    expect(await reusedCount(small, "/v1/holidays")).toBe(2);
  });
});

describe("an answer is reused only while it holds", () => {
  let clocked: TestServer;
  let now = Date.parse("2026-03-31T21:59:58Z"); // 23:59:58 in Berlin (CEST)
  beforeAll(async () => {
    clocked = await testServer({ DEMO_HOURLY_LIMIT: "1000" }, () => ({ now: () => new Date(now) }));
  });
  afterAll(() => clocked.close());

  it("today's VAT rates until the country's midnight, then the next day's", async () => {
    const first = (await (await fetch(`${clocked.url}/v1/vat?code=DE`)).json()) as { date: string };
    expect(first.date).toBe("2026-03-31");
    now += 1000;
    expect(((await (await fetch(`${clocked.url}/v1/vat?code=DE`)).json()) as { date: string }).date).toBe("2026-03-31");
    expect(await reusedCount(clocked, "/v1/vat")).toBe(1);
    now += 1000; // 00:00:00 in Berlin
    expect(((await (await fetch(`${clocked.url}/v1/vat?code=DE`)).json()) as { date: string }).date).toBe("2026-04-01");
    expect(await reusedCount(clocked, "/v1/vat")).toBe(1);
  });
});

describe("a failure inside the hot lane", () => {
  it("is logged and never stops the process: the answer was sent, the next call is served", async () => {
    let failures = 0;
    const broken = await testServer({ DEMO_HOURLY_LIMIT: "1000" }, (deps) => ({
      metrics: Object.assign(Object.create(deps.metrics) as typeof deps.metrics, {
        answerReused: () => {
          failures++;
          throw new Error("metrics broke");
        },
      }),
    }));
    try {
      const path = "/v1/vat?code=NL&date=2026-01-01";
      const first = await (await fetch(`${broken.url}${path}`)).text();
      expect(await (await fetch(`${broken.url}${path}`)).text()).toBe(first);
      expect(failures).toBe(1);
      expect((await fetch(`${broken.url}${path}`)).status).toBe(200);
      expect(failures).toBe(2);
    } finally {
      await broken.close();
    }
  });
});

describe("ANSWER_CACHE_MB=0", () => {
  it("turns the hot lane off: every call runs the app", async () => {
    const off = await testServer({ ANSWER_CACHE_MB: "0", DEMO_HOURLY_LIMIT: "1000" });
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${off.url}/v1/vat?code=DE`)).status).toBe(200);
      expect(await reusedCount(off, "/v1/vat")).toBe(0);
    } finally {
      await off.close();
    }
  });

  it("keeps no finished answers in the routes either: moon and VAT build theirs on every call", async () => {
    const kept = vi.spyOn(LRUCache.prototype, "set");
    const off = await testServer({ ANSWER_CACHE_MB: "0", DEMO_HOURLY_LIMIT: "1000" });
    try {
      for (const path of [
        "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1",
        "/v1/vat?code=DE",
        "/v1/vat?code=FR&date=2024-01-25",
      ])
        for (let i = 0; i < 2; i++) expect((await fetch(`${off.url}${path}`)).status).toBe(200);
      // A finished answer is its bytes and their ETag; the moon's own memos of phases and events may stay.
      const answers = kept.mock.calls.filter(
        ([, value]) => typeof value === "object" && value !== null && "etag" in value,
      );
      expect(answers).toEqual([]);
    } finally {
      kept.mockRestore();
      await off.close();
    }
  });
});

describe("normaliseTarget", () => {
  it.each([
    ["/v1/moon", "/v1/moon"],
    ["/v1/moon?", "/v1/moon"],
    ["/v1/moon?date=1", "/v1/moon?date=1"],
    ["/v1/moon?lon=2&date=1&lat=3", "/v1/moon?date=1&lat=3&lon=2"],
    ["/v1/moon?b=2&a=1&b=1", "/v1/moon?a=1&b=2&b=1"], // a repeated name keeps its order
    ["/v1/moon?&&b=2&&a=1&", "/v1/moon?a=1&b=2"],
    ["/v1/moon?flag&a=1", "/v1/moon?a=1&flag"],
  ])("%s → %s", (target, normal) => {
    expect(normaliseTarget(target)).toBe(normal);
  });
});
