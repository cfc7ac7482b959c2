import { checkVAT, germany } from "jsvat";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { VAT_EXAMPLE } from "../../src/features/vat/examples.js";
import type { VatResponseBody } from "../../src/features/vat/schema.js";
import { ViesFake, type ViesFault } from "../fakes/vies.js";
import { type TestApp, testApp } from "../helpers/app.js";

/** A German VAT number with a valid check digit, from an 8-digit stem. */
function germanNumber(stem: string): string {
  for (let d = 0; d <= 9; d++) {
    const candidate = `DE${stem}${d}`;
    if (checkVAT(candidate, [germany]).isValid) return candidate;
  }
  throw new Error(`no check digit for ${stem}`);
}

const REGISTERED = germanNumber("11122233");
const fake = new ViesFake({
  [REGISTERED]: { name: "Example GmbH", address: "Musterstraße 1\n10115 Berlin" },
  DE136695976: null, // registered, name and address withheld (as Germany does)
  EL094259216: { name: "ΠΑΡΑΔΕΙΓΜΑ Α.Ε.", address: "ΑΘΗΝΑ" },
  XI980780684: { name: "Example NI Ltd", address: "Belfast" },
});
let t: TestApp;
/** The same app with a short upstream deadline, for the hanging VIES. */
let quick: TestApp;

beforeAll(async () => {
  await fake.start();
  const env = { VIES_BASE_URL: fake.url, DEMO_HOURLY_LIMIT: "100000" };
  t = await testApp({ ...env, UPSTREAM_TIMEOUT_MS: "10000" });
  quick = await testApp({ ...env, UPSTREAM_TIMEOUT_MS: "250" });
});
afterAll(async () => {
  await t.close();
  await quick.close();
  await fake.close();
});
beforeEach(() => {
  fake.fault = null;
  fake.requests.length = 0;
});

async function registration(code: string, date = "", app = t) {
  const res = await app.app.request(`/v1/vat?code=${encodeURIComponent(code)}${date && `&date=${date}`}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as VatResponseBody;
  return { body, reg: body.vat_number?.registration };
}

describe("VIES registration check (fake VIES REST API on 127.0.0.1)", () => {
  it("asks POST /check-vat-number with the member-state code and number, and reports a registered number", async () => {
    const { reg } = await registration(REGISTERED);
    expect(reg).toEqual({
      status: "valid",
      checked: true,
      registry: "VIES",
      name: "Example GmbH",
      address: "Musterstraße 1\n10115 Berlin",
      checked_at: "2026-11-21T10:15:00.000Z",
      cached: false,
    });
    expect(fake.requests).toEqual([
      {
        method: "POST",
        path: "/taxation_customs/vies/rest-api/check-vat-number",
        body: { countryCode: "DE", vatNumber: REGISTERED.slice(2) },
      },
    ]);
  });

  it("keeps the documented example true", async () => {
    const { body } = await registration("DE136695976", "2020-08-01");
    expect(body).toEqual(VAT_EXAMPLE);
  });

  it("serves a repeated check from the cache (one upstream call)", async () => {
    const number = germanNumber("22222222");
    expect((await registration(number)).reg).toMatchObject({ status: "invalid", cached: false });
    expect((await registration(number)).reg).toMatchObject({ status: "invalid", cached: true });
    expect(fake.requests).toHaveLength(1);
  });

  it("uses VIES's EL for Greece and XI for Northern Ireland", async () => {
    expect((await registration("GR 094 259 216")).reg?.status).toBe("valid");
    expect((await registration("XI980780684")).reg?.status).toBe("valid");
    expect(fake.requests.map((r) => r.body)).toEqual([
      { countryCode: "EL", vatNumber: "094259216" },
      { countryCode: "XI", vatNumber: "980780684" },
    ]);
  });

  it("reports an unregistered number as invalid with withheld fields as null", async () => {
    const { reg } = await registration(germanNumber("33333333"));
    expect(reg).toMatchObject({ status: "invalid", checked: true, name: null, address: null });
  });

  it.each<[ViesFault, string, string]>([
    ["500", "status", "44440001"],
    ["garbage", "garbage", "44440002"],
    ["hang", "timeout", "44440003"],
    ["reset", "network", "44440004"],
    ["ms_unavailable", "MS_UNAVAILABLE", "44440005"],
    ["huge", "too_large", "44440006"],
    ["huge-declared", "too_large", "44440007"],
    ["429", "status", "44440008"],
    ["wrong-shape", "garbage", "44440009"],
    ["redirect", "status", "44440010"],
    ["stall", "timeout", "44440011"],
    ["drip", "timeout", "44440012"],
  ])("an outage (%s) is unknown, never invalid, and is not cached", async (fault, reason, stem) => {
    const number = germanNumber(stem);
    fake.fault = fault;
    const { body, reg } = await registration(number, "", ["hang", "stall", "drip"].includes(fault ?? "") ? quick : t);
    expect(reg).toMatchObject({ status: "unknown", checked: true, reason, cached: false });
    expect(body.rates.standard).toBe(19);
    fake.fault = null;
    expect((await registration(number)).reg).toMatchObject({ status: "invalid", cached: false });
    expect(fake.requests).toHaveLength(2);
  });

  it("does not ask VIES about numbers outside it or failing the offline check", async () => {
    expect((await registration("GB980780684")).reg).toMatchObject({ status: "unknown", reason: "not_covered" });
    expect((await registration("CHE-116.281.710")).reg).toMatchObject({ status: "unknown", reason: "not_covered" });
    expect((await registration("DE136695977")).reg).toMatchObject({
      status: "unknown",
      checked: false,
      reason: "failed_offline_check",
    });
    expect(fake.requests).toHaveLength(0);
  });

  it("makes one upstream call for concurrent checks of the same number", async () => {
    const number = germanNumber("55555555");
    fake.gate();
    const pending = [registration(number), registration(number), registration(number)];
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100)); // room for a duplicate call to show up
    fake.release();
    const regs = (await Promise.all(pending)).map((r) => r.reg?.status);
    expect(regs).toEqual(["invalid", "invalid", "invalid"]);
    expect(fake.requests).toHaveLength(1);
  });
});
