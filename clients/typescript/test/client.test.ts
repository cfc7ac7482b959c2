import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailLane } from "../../../src/ports/mail-lane.js";
import { fakeOpenMeteo } from "../../../test/fakes/open-meteo.js";
import { fakePostcodesIo } from "../../../test/fakes/postcodes-io.js";
import type { UpstreamFake } from "../../../test/fakes/upstream-fake.js";
import { type TestServer, testServer } from "../../../test/helpers/app.js";
import { type AlmanacClient, createAlmanacClient, isAlmanacError, type paths } from "../src/index.js";

/**
 * @almanac/client against a live server (the real app on a socket, upstreams faked, an in-memory
 * mail lane): every operation of the served document is called through the typed client, and
 * the thin layer's key, Idempotency-Key, retries, typed errors, X-Request-Id and RateLimit are
 * checked on real answers (retry timing on a scripted fetch).
 */

// Each live test makes several calls (the first ten, one per operation) on a host CI may load.
vi.setConfig({ testTimeout: 60_000 });

const memoryLane = (): MailLane => ({
  send: async () => ({ ok: true, messageId: "<client@almanac>" }),
  close: async () => {},
});

interface Seen {
  method: string;
  path: string;
  headers: Headers;
}

let server: TestServer;
let upstreams: UpstreamFake[];
let key: string;
const seen: Seen[] = [];
/** A fetch that records what the client sends, then sends it. */
const recording = (request: Request) => {
  seen.push({ method: request.method, path: new URL(request.url).pathname, headers: new Headers(request.headers) });
  return fetch(request);
};
let client: AlmanacClient;
let anonymous: AlmanacClient;

beforeAll(async () => {
  upstreams = [await fakePostcodesIo(), await fakeOpenMeteo()];
  server = await testServer(
    {
      POSTCODES_BASE_URL: upstreams[0]?.url,
      OPEN_METEO_BASE_URL: upstreams[1]?.url,
      DEMO_HOURLY_LIMIT: "1000",
      MAIL_URL: "smtp://127.0.0.1:1",
    },
    () => ({ mail: memoryLane() }),
  );
  key = (await server.deps.keys.create({ name: "client-test", permissions: ["vibe.classify"] })).key;
  client = createAlmanacClient({ baseUrl: server.url, apiKey: key, fetch: recording });
  anonymous = createAlmanacClient({ baseUrl: server.url, fetch: recording });
});
afterAll(async () => {
  await server?.close();
  await Promise.all((upstreams ?? []).map((u) => u.close()));
});

describe("every operation of the served document, through the typed client", () => {
  it("calls each one and gets its typed 200", async () => {
    const moon = await client.get("/v1/moon", { params: { query: { date: "2024-01-25", lat: 51.5, lon: -0.1 } } });
    expect(moon.data.phase.key).toBe("full_moon");
    const sun = await client.get("/v1/sun", { params: { query: { lat: 51.5, lon: -0.1, date: "2024-06-21" } } });
    expect(sun.data.sunrise).toMatch(/^2024-06-21T/);
    const holidays = await client.get("/v1/holidays", {
      params: { query: { country: "GB", region: "SCT", year: 2026, types: ["public", "bank"] } },
    });
    expect(holidays.data.holidays.length).toBeGreaterThan(5);
    const working = await client.get("/v1/holidays/working-days", {
      params: { query: { country: "DE", date: "2026-12-24", add: 3 } },
    });
    expect(working.data.result).toMatch(/^2026-12-/);
    const vat = await client.get("/v1/vat", { params: { query: { code: "DE", date: "2026-01-01" } } });
    expect(vat.data).toBeTruthy();
    const postcode = await client.get("/v1/postcode", { params: { query: { postcode: "SW1A2AA" } } });
    expect(postcode.data.postcode).toBe("SW1A 2AA");
    const weather = await client.get("/v1/weather", { params: { query: { postcode: "SW1A2AA" } } });
    expect(weather.data).toBeTruthy();
    const usage = await client.get("/v1/usage");
    expect(usage.data.name).toBe("client-test");
    const classify = await client.post("/v1/vibe/classify", { body: { texts: ["What a lovely day!"] } });
    expect(classify.data.results[0]?.label).toBe("positive");
    const extras = await client.post("/v1/vibe/classify", {
      params: { query: { include: "emotions,sentences" } },
      body: ["Thank you so much! The room was filthy."],
    });
    const first = extras.data.results[0];
    expect(first?.sentences?.map((x) => x.offset)).toEqual([0, 19]);
    expect(first?.emotions?.map((e) => e.label)).toContain("gratitude");
    expect(typeof first?.mixed).toBe("boolean");
    const contact = await anonymous.post("/v1/mail/contact", {
      body: { name: "Ada", email: "ada@example.com", message: "Hello there, a question about VAT." },
    });
    expect(contact.data).toBeTruthy();

    // Every operation the document lists for clients (its paths) was called.
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as { paths: paths };
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const called = new Set(seen.map((s) => `${s.method} ${s.path}`));
    expect(documented.filter((op) => !called.has(op))).toEqual([]);
    expect(documented.length).toBe(10);
  });
});

describe("the thin layer", () => {
  it("sends the key, and without one a keyed operation is a typed 401", async () => {
    const before = seen.length;
    await client.get("/v1/usage");
    expect(seen[before]?.headers.get("authorization")).toBe(`Bearer ${key}`);
    const e = await anonymous.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "unauthorized")).toBe(true);
    if (!isAlmanacError(e, "unauthorized")) return;
    expect(e.status).toBe(401);
    expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.response?.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("adds a fresh Idempotency-Key to every POST, and keeps one the caller sets", async () => {
    const before = seen.length;
    await client.post("/v1/vibe/classify", { body: ["fine"] });
    await client.post("/v1/vibe/classify", { body: ["fine"] });
    const again = await client.post("/v1/vibe/classify", {
      body: ["fine"],
      params: { header: { "idempotency-key": "client-test-1" } },
    });
    const replay = await client.post("/v1/vibe/classify", {
      body: ["fine"],
      params: { header: { "idempotency-key": "client-test-1" } },
    });
    const keys = seen.slice(before).map((s) => s.headers.get("idempotency-key"));
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys.slice(0, 2)).size).toBe(2);
    expect(keys.slice(2)).toEqual(["client-test-1", "client-test-1"]);
    expect(again.replayed).toBe(false);
    expect(replay.replayed).toBe(true);
  });

  it("gives errors typed by error.code, with reason, details and the request id", async () => {
    const e = await client.get("/v1/moon", { params: { query: { lat: 999, lon: 0 } } }).catch((err: unknown) => err);
    expect(isAlmanacError(e, "invalid_body")).toBe(true);
    if (!isAlmanacError(e)) return;
    expect(e.status).toBe(400);
    expect(e.requestId).toBe(e.response?.headers.get("x-request-id"));
    expect(e.message.length).toBeGreaterThan(0);
  });

  it("exposes X-Request-Id and the demo tier's RateLimit", async () => {
    const a = await anonymous.get("/v1/holidays", { params: { query: { country: "FR", year: 2025 } } });
    const b = await anonymous.get("/v1/holidays", { params: { query: { country: "FR", year: 2025 } } });
    expect(a.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.requestId).not.toBe(a.requestId);
    expect(a.rateLimit).toMatchObject({ policy: "demo" });
    expect(b.rateLimit?.remaining).toBe((a.rateLimit?.remaining ?? 0) - 1);
    expect(a.rateLimit?.resetSeconds).toBeGreaterThan(0);
  });

  it("does not wait out a live 429 whose Retry-After is past the bound: it throws rate_limited at once", async () => {
    const limited = await testServer({ DEMO_HOURLY_LIMIT: "1" });
    try {
      const c = createAlmanacClient({ baseUrl: limited.url, maxRetries: 3 });
      await c.get("/v1/moon");
      const started = Date.now();
      const e = await c.get("/v1/moon").catch((err: unknown) => err);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(isAlmanacError(e, "rate_limited")).toBe(true);
      if (!isAlmanacError(e, "rate_limited")) return;
      expect(e.status).toBe(429);
      expect(e.retryAfter).toBeGreaterThan(10);
      expect(e.rateLimit).toMatchObject({ policy: "demo", remaining: 0 });
    } finally {
      await limited.close();
    }
  });
});

describe("conditional GETs", () => {
  it("resolves a matching If-None-Match with a 304 that has no data", async () => {
    const first = await client.get("/v1/moon", { params: { query: { date: "2024-01-25" } } });
    const etag = first.response.headers.get("etag") ?? "";
    expect(etag).not.toBe("");
    const again = await client.get("/v1/moon", {
      params: { query: { date: "2024-01-25" }, header: { "If-None-Match": etag } },
    });
    expect(again).toMatchObject({ status: 304, notModified: true, data: undefined });
  });
});

describe("classifyAll", () => {
  const texts = Array.from({ length: 45 }, (_, i) =>
    i % 3 === 0
      ? `I love this, number ${i}!`
      : i % 3 === 1
        ? `The parcel ${i} arrived on Tuesday.`
        : `Worst support ever, ticket ${i}.`,
  );

  it("classifies any number of texts in calls of 20, in input order, one Idempotency-Key per chunk", async () => {
    const before = seen.length;
    const progress: number[] = [];
    const all = await client.classifyAll(texts, { concurrency: 3, onProgress: (p) => progress.push(p.done) });
    const calls = seen.slice(before);
    expect(calls.map((c) => c.path)).toEqual(Array(3).fill("/v1/vibe/classify"));
    expect(new Set(calls.map((c) => c.headers.get("idempotency-key"))).size).toBe(3);
    expect(all.results.map((r) => r.index)).toEqual(texts.map((_, i) => i));
    const singles = await client.post("/v1/vibe/classify", { body: texts.slice(40) });
    expect(all.results.slice(40).map((r) => r.label)).toEqual(singles.data.results.map((r) => r.label));
    expect(all.usage.texts).toBe(45);
    expect(progress.sort((a, b) => a - b)).toEqual([progress[0], progress[1], 45]);
  });

  it("sends include with every chunk", async () => {
    const all = await client.classifyAll(texts.slice(0, 25), { include: "emotions" });
    expect(all.results).toHaveLength(25);
    expect(all.results.every((r) => "emotions" in r)).toBe(true);
  });

  it("stays inside the key's RateLimit: no call is refused with 429", async () => {
    const small = (
      await server.deps.keys.create({
        name: "client-batch",
        permissions: ["vibe.classify"],
        ratelimit: { limit: 2, durationSec: 1 },
      })
    ).key;
    const statuses: number[] = [];
    const c = createAlmanacClient({
      baseUrl: server.url,
      apiKey: small,
      fetch: async (r) => {
        const res = await fetch(r);
        statuses.push(res.status);
        return res;
      },
    });
    const all = await c.classifyAll(texts.concat(texts), { concurrency: 4 });
    expect(all.results).toHaveLength(90);
    expect(statuses).toEqual(Array(5).fill(200));
  });

  it("waits out a 429 and sends the chunk again with the same Idempotency-Key", async () => {
    const requests: Request[] = [];
    const c = createAlmanacClient({
      baseUrl: server.url,
      apiKey: key,
      fetch: async (r) => {
        requests.push(r.clone());
        if (requests.length === 1)
          return new Response(JSON.stringify({ error: { code: "rate_limited", message: "wait", request_id: "r" } }), {
            status: 429,
            headers: { "content-type": "application/json", "retry-after": "0.2" },
          });
        return fetch(r);
      },
    });
    const all = await c.classifyAll(texts.slice(0, 5));
    expect(all.results).toHaveLength(5);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.headers.get("idempotency-key")).toBe(requests[0]?.headers.get("idempotency-key"));
  });

  it("stops at once when its signal fires", async () => {
    const controller = new AbortController();
    controller.abort();
    const e = await client.classifyAll(texts, { signal: controller.signal }).catch((err: unknown) => err);
    expect(isAlmanacError(e, "aborted")).toBe(true);
  });
});

describe("retries (a scripted fetch)", () => {
  /** Answers `statuses` in turn (then 200), recording each request. */
  function scripted(statuses: number[], retryAfter: string) {
    const requests: Request[] = [];
    const f = async (request: Request) => {
      requests.push(request);
      const status = statuses[requests.length - 1] ?? 200;
      const body =
        status === 200
          ? { model: { provider: "x", name: "x", version: "1" }, labels: [], results: [] }
          : { error: { code: status === 429 ? "rate_limited" : "unavailable", message: "wait", request_id: "r" } };
      return new Response(JSON.stringify(body), {
        status,
        headers: { "content-type": "application/json", "retry-after": retryAfter, "x-request-id": "r" },
      });
    };
    return { requests, fetch: f };
  }

  it("retries a 503 and a 429 after Retry-After, with the same Idempotency-Key", async () => {
    const s = scripted([503, 429], "1");
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", apiKey: "alm_x", fetch: s.fetch });
    const started = Date.now();
    const answer = await c.post("/v1/vibe/classify", { body: ["hi"] });
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(s.requests).toHaveLength(3);
    const keys = new Set(s.requests.map((r) => r.headers.get("idempotency-key")));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toBeTruthy();
    expect(await s.requests[2]?.text()).toBe('["hi"]');
  });

  it("stops after maxRetries and throws the last answer's error", async () => {
    const s = scripted([503, 503, 503, 503], "0");
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: s.fetch, maxRetries: 2 });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(s.requests).toHaveLength(3);
    expect(isAlmanacError(e, "unavailable")).toBe(true);
  });

  it("does not retry past maxRetryDelayMs, nor other statuses", async () => {
    const long = scripted([503], "30");
    const c = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: long.fetch, maxRetryDelayMs: 5000 });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(long.requests).toHaveLength(1);
    expect(isAlmanacError(e) && e.retryAfter).toBe(30);
    const other = scripted([500], "0");
    const d = createAlmanacClient({ baseUrl: "http://almanac.test", fetch: other.fetch });
    await d.get("/v1/usage").catch(() => {});
    expect(other.requests).toHaveLength(1);
  });

  it("turns a failed connection into network_error", async () => {
    const c = createAlmanacClient({ baseUrl: "http://127.0.0.1:1", maxRetries: 0 });
    const e = await c.get("/v1/usage").catch((err: unknown) => err);
    expect(isAlmanacError(e, "network_error")).toBe(true);
  });
});

describe("the README's example", () => {
  const example = (file: string) =>
    readFileSync(new URL(file, import.meta.url), "utf8").match(
      /```ts\n(import \{ createAlmanacClient[\s\S]*?)```/,
    )?.[1];

  it("is in the client's README, and the project's README links to it", () => {
    expect(example("../README.md")).toBeTruthy();
    expect(readFileSync(new URL("../../../README.md", import.meta.url), "utf8")).toContain(
      "clients/typescript/README.md",
    );
  });

  it("runs as written against a live server (only the origin and the package path swapped)", async () => {
    const code = (example("../README.md") ?? "")
      .replace('"@almanac/client"', JSON.stringify(new URL("../src/index.ts", import.meta.url).pathname))
      .replace('"https://almanac.example"', JSON.stringify(server.url));
    const dir = mkdtempSync(join(tmpdir(), "almanac-readme-"));
    try {
      writeFileSync(join(dir, "example.mts"), code);
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", join(dir, "example.mts")], {
        env: { ...process.env, ALMANAC_KEY: key },
        cwd: new URL("..", import.meta.url).pathname,
      });
      const [moonLine, vibeLine] = stdout.trim().split("\n");
      expect(moonLine).toMatch(
        /^(New Moon|Waxing Crescent|First Quarter|Waxing Gibbous|Full Moon|Waning Gibbous|Last Quarter|Waning Crescent) /,
      );
      expect(vibeLine).toMatch(/^positive [0-9a-f-]{36}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
