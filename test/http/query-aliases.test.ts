import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

/** One naming scheme across the lookups' parameters (`lat`, `lon`, `tz`), old and long names kept as aliases. */

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000" });
});
afterAll(() => t.close());

const body = async (path: string) => {
  const res = await t.app.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

describe("query parameters: lat, lon, tz, with the old spellings as aliases", () => {
  it.each([
    [
      "/v1/moon?date=2024-01-25&latitude=51.5&longitude=-0.1&timezone=Europe/London",
      "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1&tz=Europe/London",
    ],
    [
      "/v1/sun?date=2024-06-21&latitude=51.5&longitude=-0.1&time_zone=Asia/Tokyo",
      "/v1/sun?date=2024-06-21&lat=51.5&lon=-0.1&tz=Asia/Tokyo",
    ],
    [
      "/v1/sun?date=2025-06-21&lat=51.5&lon=-0.1&timezone=Europe/Paris",
      "/v1/sun?date=2025-06-21&lat=51.5&lon=-0.1&tz=Europe/Paris",
    ],
  ])("%s answers as %s", async (aliased, canonical) => {
    expect(await body(aliased)).toEqual(await body(canonical));
  });

  it("a percent-encoded alias name is still an alias (the fast path does not skip it)", async () => {
    expect(await body("/v1/moon?date=2024-01-25&lati%74ude=51.5&longitude=-0.1")).toEqual(
      await body("/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1"),
    );
  });

  it("the canonical name wins when both are sent", async () => {
    const both = await body(
      "/v1/sun?date=2024-06-21&lat=51.5&latitude=10&lon=-0.1&tz=Europe/London&timezone=Asia/Tokyo",
    );
    expect(both).toMatchObject({ location: { lat: 51.5 }, tz: "Europe/London" });
  });

  it("an invalid aliased value is reported under the canonical name", async () => {
    for (const path of ["/v1/moon?latitude=999&longitude=0", "/v1/sun?latitude=100&lon=0"]) {
      const res = await t.app.request(path);
      expect(res.status, path).toBe(400);
      expect((await errorOf(res)).error.message, path).toContain('query parameter "lat"');
    }
  });

  it("the document names the aliases of lat, lon and tz", async () => {
    const doc = (await (await t.app.request("/v1/openapi.json")).json()) as {
      paths: Record<string, { get: { parameters: { name: string; description?: string }[] } }>;
    };
    const params = doc.paths["/v1/sun"]?.get.parameters ?? [];
    const described = (name: string) => params.find((p) => p.name === name)?.description ?? "";
    expect(described("lat")).toContain("`latitude`");
    expect(described("lon")).toContain("`longitude`");
    expect(described("tz")).toMatch(/`timezone` or `time_zone`/);
  });
});
