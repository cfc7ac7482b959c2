import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

/** Standards-mode pages, an icon, and HTML errors for people only. */
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const BROWSER = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

describe("pages", () => {
  it.each(["/", "/account", "/acount"])("%s starts with <!doctype html> (no quirks mode)", async (path) => {
    const res = await t.app.request(path, { headers: BROWSER });
    expect((await res.text()).slice(0, 15).toLowerCase()).toBe("<!doctype html>");
  });

  it("links an icon that is served, and /favicon.ico leads to it", async () => {
    const html = await (await t.app.request("/", { headers: BROWSER })).text();
    const href = /<link rel="icon" href="([^"]+)"/.exec(html)?.[1];
    expect(href).toBe("/favicon.svg");
    const icon = await t.app.request(href as string);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(await icon.text()).toMatch(/^<svg /);
    const ico = await t.app.request("/favicon.ico");
    expect(ico.status).toBe(301);
    expect(ico.headers.get("location")).toBe("/favicon.svg");
  });
});

describe("home page copy", () => {
  it("quotes the configured demo limit", async () => {
    const other = await testApp({ DEMO_HOURLY_LIMIT: "25" });
    try {
      const html = await (await other.app.request("/", { headers: BROWSER })).text();
      expect(html).toContain("25 calls an hour per address");
      expect(html).not.toContain("60 calls an hour");
    } finally {
      await other.close();
    }
  });
});

describe("mistyped paths", () => {
  it.each(["/acount", "/docs/", "/nothing/here"])("%s answers a browser with an HTML 404 page", async (path) => {
    const res = await t.app.request(path, { headers: BROWSER });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    const html = await res.text();
    expect(html).toContain("Not found");
    expect(html).toContain(`No route for GET ${path}`);
  });

  it("answers an API client (curl's */*) with the JSON error shape", async () => {
    const res = await t.app.request("/acount", { headers: { Accept: "*/*" } });
    expect(res.status).toBe(404);
    const { error } = await errorOf(res);
    expect(error.code).toBe("not_found");
    expect(error.message).toBe("No route for GET /acount");
  });

  it.each(["/v1/nope", "/api/auth/nope", "/v1"])("keeps JSON under the API (%s) even for a browser", async (path) => {
    const res = await t.app.request(path, { headers: BROWSER });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
});
