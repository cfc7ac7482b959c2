import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VatResponseBody } from "../../src/features/vat/schema.js";
import { type TestApp, testApp } from "../helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DEMO_HOURLY_LIMIT: "100000" });
});
afterAll(() => t.close());

const rates = async (code: string, date: string) => {
  const res = await t.app.request(`/v1/vat?code=${code}&date=${date}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as VatResponseBody;
  return { ...body.rates, from: body.effective_from, source: body.source.name };
};

// 2023–2026 reduced-rate changes, each checked on the last day before and the first day of it.
describe("reduced rates 2023–2026, through GET /v1/vat", () => {
  it("Cyprus: 3 % super-reduced rate from 2023-07-21", async () => {
    expect(await rates("CY", "2023-07-20")).toMatchObject({ reduced: [9, 5], super_reduced: null });
    const after = await rates("CY", "2023-07-21");
    expect(after).toMatchObject({ standard: 19, reduced: [9, 5], super_reduced: 3, from: "2023-07-21" });
    expect(after.source).toContain("Cyprus VAT (Amendment) Law 2023");
  });

  it("Malta: 12 % rate from 2024-01-01", async () => {
    expect((await rates("MT", "2023-12-31")).reduced).toEqual([7, 5]);
    expect(await rates("MT", "2024-01-01")).toMatchObject({ standard: 18, reduced: [12, 7, 5] });
  });

  it("Lithuania: 9 % abolished and 12 % added from 2026-01-01", async () => {
    expect((await rates("LT", "2025-12-31")).reduced).toEqual([9, 5]);
    expect(await rates("LT", "2026-01-01")).toMatchObject({ standard: 21, reduced: [12, 5], super_reduced: null });
  });

  it("Austria: 4.9 % on basic foods from 2026-07-01", async () => {
    expect(await rates("AT", "2026-06-30")).toMatchObject({ reduced: [13, 10], super_reduced: null });
    expect(await rates("AT", "2026-07-01")).toMatchObject({ standard: 20, reduced: [13, 10], super_reduced: 4.9 });
  });

  it("Isle of Man: 12.5 % hospitality rate from 2021-10-01 to 2022-03-31, as in GB", async () => {
    for (const code of ["IM", "GB"]) {
      expect((await rates(code, "2021-09-30")).reduced).toEqual([5]);
      expect((await rates(code, "2021-10-01")).reduced).toEqual([12.5, 5]);
      expect((await rates(code, "2022-03-31")).reduced).toEqual([12.5, 5]);
      expect((await rates(code, "2022-04-01")).reduced).toEqual([5]);
    }
  });
});
