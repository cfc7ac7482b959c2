import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadVatDataset } from "../../src/features/vat/dataset.js";
import { ratesOn } from "../../src/features/vat/lookup.js";
import { type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
const clock = new Date("2024-08-31T22:30:00Z");

beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "100000" }, () => ({ now: () => clock }));
});
afterAll(() => t.close());

/** The route keeps each (country, date) answer serialised: the bytes must stay c.json's. */
describe("GET /v1/vat: body bytes", () => {
  it("is JSON.stringify of {query, ...answer} for every spelling, repeated and with a date or today", async () => {
    const data = loadVatDataset();
    const cases: [string, string, string | null, string][] = [
      ["de", "DE", "2020-08-01", "2020-08-01"],
      ["DE", "DE", "2020-08-01", "2020-08-01"],
      [" De ", "DE", "2020-08-01", "2020-08-01"],
      ["FI", "FI", null, "2024-09-01"],
      ["fi", "FI", null, "2024-09-01"],
      ["GB", "GB", null, "2024-08-31"],
    ];
    for (const [code, country, date, effective] of cases) {
      for (let i = 0; i < 2; i++) {
        const res = await t.app.request(`/v1/vat?code=${encodeURIComponent(code)}${date ? `&date=${date}` : ""}`);
        expect(res.status, code).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/json");
        const found = ratesOn(data, country, effective);
        if (!found.ok) throw new Error(`no rates for ${country}`);
        const echoed = ((await res.clone().json()) as { query: { code: string } }).query.code;
        expect(await res.text()).toBe(JSON.stringify({ query: { code: echoed, date }, ...found.answer }));
      }
    }
  });
});
