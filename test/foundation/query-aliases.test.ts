import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "1000" });
});
afterAll(() => t.close());

const body = async (path: string) => {
  const res = await t.app.request(path);
  expect(res.status, path).toBe(200);
  return res.json();
};

describe("one naming scheme for lookup parameters, old spellings as aliases", () => {
  it.each([
    [
      "/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1&tz=Europe/London",
      "/v1/moon?date=2024-01-25&latitude=51.5&longitude=-0.1&timezone=Europe/London",
    ],
    [
      "/v1/sun?date=2024-06-21&lat=51.5&lon=-0.1&tz=Europe/London",
      "/v1/sun?date=2024-06-21&latitude=51.5&longitude=-0.1&time_zone=Europe/London",
    ],
  ])("%s answers the same as %s", async (canonical, aliased) => {
    expect(await body(aliased)).toEqual(await body(canonical));
  });

  it("a percent-encoded alias name is still an alias (the fast path does not skip it)", async () => {
    expect(await body("/v1/moon?date=2024-01-25&lati%74ude=51.5&longitude=-0.1")).toEqual(
      await body("/v1/moon?date=2024-01-25&lat=51.5&lon=-0.1"),
    );
  });

  it("the canonical name wins when both are sent", async () => {
    const both = (await body("/v1/sun?date=2024-06-21&lat=51.5&latitude=10&lon=-0.1")) as { location: { lat: number } };
    expect(both.location.lat).toBe(51.5);
  });

  it("an invalid aliased value is reported under the canonical name", async () => {
    const res = await t.app.request("/v1/moon?latitude=999&longitude=0");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error.message).toContain('query parameter "lat"');
  });
});
