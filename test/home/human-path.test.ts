import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000", PUBLIC_URL: "https://almanac.example" });
});
afterAll(() => t.close());

describe("GET /: a home page for people", () => {
  it("says what Almanac is, gives a curl line per lookup on the host it was asked on, and links the way in", async () => {
    const res = await t.app.request("http://127.0.0.1:8080/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await res.text();
    for (const href of ['href="/docs"', 'href="/account"', 'href="/v1/openapi.json"']) expect(html).toContain(href);
    for (const path of [
      "/v1/moon",
      "/v1/sun",
      "/v1/holidays",
      "/v1/holidays/working-days",
      "/v1/vat",
      "/v1/postcode",
      "/v1/weather",
    ]) {
      expect(html).toContain(`curl &#39;http://127.0.0.1:8080${path}`);
    }
  });

  it("every curl line on the page works against the app", async () => {
    const html = await (await t.app.request("http://127.0.0.1:8080/")).text();
    const paths = [...html.matchAll(/curl &#39;http:\/\/127\.0\.0\.1:8080([^&]+(?:&amp;[^&]+)*)&#39;/g)].map((m) =>
      (m[1] as string).replaceAll("&amp;", "&"),
    );
    expect(paths.length).toBeGreaterThanOrEqual(5);
    // The offline ones answer here; postcode and weather need their upstreams (tested elsewhere).
    for (const p of paths.filter((p) => !/postcode|weather/.test(p)))
      expect([p, (await t.app.request(p)).status]).toEqual([p, 200]);
  });

  it("HEAD / answers like GET without a body", async () => {
    const res = await t.app.request("/", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("the docs and the account page link to each other and home", async () => {
    const docs = await (await t.app.request("/docs")).text();
    expect(docs).toContain('href="/account"');
    expect(docs).toContain('href="/"');
    const account = await (await t.app.request("/account")).text();
    expect(account).toContain('href="/docs"');
    expect(account).toContain('href="/"');
  });
});

describe("/docs works on any host", () => {
  it("the OpenAPI document lists a relative server, and the page puts it first for Try it out", async () => {
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as { servers: { url: string }[] };
    expect(doc.servers.map((s) => s.url)).toContain("/");
    const init = await (await t.app.request("/docs/init.js")).text();
    expect(init).toContain('s.url === "/"');
  });

  it("Swagger UI's external validator is off", async () => {
    const init = await (await t.app.request("/docs/init.js")).text();
    expect(init).toContain("validatorUrl: null");
  });
});

describe("CORS on the public API", () => {
  it.each(["/v1/moon", "/v1/vat", "/v1/vibe/classify", "/v1/mail/contact"])(
    "a preflight for %s is 204 with methods, headers and max-age, and counts against nothing",
    async (path) => {
      const res = await t.app.request(path, {
        method: "OPTIONS",
        headers: {
          Origin: "https://someone.example",
          "Access-Control-Request-Method": path.startsWith("/v1/vibe") || path.includes("mail") ? "POST" : "GET",
          "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toBe("GET,HEAD,POST,OPTIONS");
      expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toBe(
        "authorization,content-type,idempotency-key",
      );
      expect(res.headers.get("access-control-max-age")).toBe("86400");
      expect(res.headers.get("ratelimit")).toBeNull();
    },
  );

  it("a GET from a page on another origin may read the body and the request id", async () => {
    const res = await t.app.request("/v1/moon?date=2024-01-25", { headers: { Origin: "https://someone.example" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    expect(res.headers.get("access-control-expose-headers")).toContain("Retry-After");
  });

  it("errors carry it too, so a browser can read them", async () => {
    const res = await t.app.request("/v1/moon?lat=999", { headers: { Origin: "https://someone.example" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});
