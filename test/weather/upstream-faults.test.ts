import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { Fault } from "../fakes/upstream-fake.js";
import { errorOf, testApp } from "../helpers/app.js";
import { q, type WeatherRig, weatherRig } from "./setup.js";

const FAULTS: Exclude<Fault, null>[] = [
  "500",
  "429",
  "garbage",
  "wrong-shape",
  "hang",
  "reset",
  "redirect",
  "stall",
  "huge",
  "huge-declared",
  "drip",
];

describe("weather and postcode upstream failures", () => {
  // A fresh app (and so an empty cache) per test.
  let rig: WeatherRig;
  beforeEach(async () => {
    // A short deadline keeps the "hang" cases quick; the tests only assert that they answered 502.
    rig = await weatherRig({ UPSTREAM_TIMEOUT_MS: "300" });
  });
  afterEach(() => rig.close());

  it.each(FAULTS)("postcodes.io %s → 502 upstream_error, on both routes", async (fault) => {
    rig.postcodes.fault = fault;
    for (const path of ["/v1/postcode", "/v1/weather"]) {
      const res = await rig.get(`${path}?postcode=${q(`SW1A ${fault === "500" ? "1AA" : "2AA"}`)}`);
      expect(res.status).toBe(502);
      const { error } = await errorOf(res);
      expect(error.code).toBe("upstream_error");
      expect(error.message).toBe("The postcode resolver failed; try again shortly.");
      expect(error.reason).toBeUndefined();
      expect(res.headers.get("retry-after")).toBeNull();
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    // Not cached, as a success or otherwise: once it recovers, the next call asks again and answers.
    rig.postcodes.fault = null;
    const calls = rig.postcodes.paths.length;
    expect((await rig.get("/v1/postcode?postcode=SW1A2AA")).status).toBe(200);
    expect(rig.postcodes.paths.length).toBe(calls + 1);
  });

  it.each(FAULTS)("Open-Meteo %s → 502 upstream_error", async (fault) => {
    // The place first (kept in the cache both routes share), so the failure met is Open-Meteo's
    // alone, not a postcode lookup that a loaded host slowed past the short deadline.
    expect((await rig.get("/v1/postcode?postcode=EH11YZ")).status).toBe(200);
    const lookups = rig.postcodes.paths.length;
    rig.meteo.fault = fault;
    const res = await rig.get("/v1/weather?postcode=EH11YZ");
    expect(res.status).toBe(502);
    expect(rig.postcodes.paths.length).toBe(lookups);
    const { error } = await errorOf(res);
    expect(error).toMatchObject({ code: "upstream_error", message: "The weather provider failed; try again shortly." });
    expect(JSON.stringify(error)).not.toContain("127.0.0.1");
    expect(error.reason).toBeUndefined();
    expect(res.headers.get("retry-after")).toBeNull();
    rig.meteo.fault = null;
    const calls = rig.meteo.paths.length;
    expect((await rig.get("/v1/weather?postcode=EH11YZ")).status).toBe(200);
    expect(rig.meteo.paths.length).toBe(calls + 1);
  });

  it("a postcode's two postcodes.io calls share one UPSTREAM_TIMEOUT_MS deadline", async () => {
    const slow = await weatherRig({ UPSTREAM_TIMEOUT_MS: "600" });
    try {
      // /postcodes answers its 404 after 400 ms; /terminated_postcodes then never answers.
      slow.postcodes.delayMs = 400;
      slow.postcodes.fault = "hang";
      slow.postcodes.faultOn = "/terminated_postcodes/";
      for (const path of ["/v1/postcode", "/v1/weather"]) {
        const started = Date.now();
        const res = await slow.get(`${path}?postcode=ZE99ZZ`);
        const ms = Date.now() - started;
        expect(res.status).toBe(502);
        expect((await errorOf(res)).error.message).toBe("The postcode resolver failed; try again shortly.");
        // One deadline: ~600 ms; a deadline per call would answer at ~1000 ms.
        expect(ms).toBeLessThan(850);
      }
    } finally {
      await slow.close();
    }
  });

  it("a 404 that is not postcodes.io's 'not found' (a wrong base URL: 'Resource not found') is a failure, not an unknown postcode", async () => {
    const postcodes = await fakePostcodesIo();
    const t = await testApp({ POSTCODES_BASE_URL: `${postcodes.url}/v2`, DEMO_HOURLY_LIMIT: "1000000" });
    try {
      for (const path of ["/v1/postcode", "/v1/weather"]) {
        const res = await t.app.request(`${path}?postcode=SW1A2AA`);
        expect(res.status).toBe(502);
        expect((await errorOf(res)).error).toMatchObject({
          code: "upstream_error",
          message: "The postcode resolver failed; try again shortly.",
        });
      }
      // Not remembered as an unknown postcode: every request asks again.
      expect(postcodes.paths).toEqual(["/v2/postcodes/SW1A%202AA", "/v2/postcodes/SW1A%202AA"]);
    } finally {
      await t.close();
      await postcodes.close();
    }
  });

  it("does not cache failures: the next call after recovery succeeds", async () => {
    rig.meteo.fault = "500";
    expect((await rig.get("/v1/weather?postcode=EH11YZ")).status).toBe(502);
    rig.meteo.fault = null;
    expect((await rig.get("/v1/weather?postcode=EH11YZ")).status).toBe(200);
  });

  it("never follows a redirect", async () => {
    rig.meteo.fault = "redirect";
    expect((await rig.get("/v1/weather?postcode=EH11YZ")).status).toBe(502);
    expect(rig.meteo.paths).toHaveLength(1);
  });

  it("counts failures in upstream_errors_total", async () => {
    rig.meteo.fault = "hang";
    expect((await rig.get("/v1/weather?postcode=EH11YZ")).status).toBe(502);
    rig.postcodes.fault = "redirect";
    expect((await rig.get("/v1/postcode?postcode=SW1A2AA")).status).toBe(502);
    const metrics = await (await rig.get("/metrics")).text();
    expect(metrics).toMatch(/upstream_errors_total\{upstream="open-meteo",kind="timeout"\} [1-9]/);
    expect(metrics).toMatch(/upstream_errors_total\{upstream="postcodes.io",kind="redirect"\} [1-9]/);
  });

  it("treats an Open-Meteo body of the wrong shape as a failure", async () => {
    const broken = await weatherRig({}, { start: "not-a-date" });
    try {
      expect((await broken.get("/v1/weather?postcode=EH11YZ")).status).toBe(502);
    } finally {
      await broken.close();
    }
  });
});

describe("hostile postcodes never change the upstream host or path", () => {
  let rig: WeatherRig;
  beforeAll(async () => {
    rig = await weatherRig();
  });
  afterAll(() => rig.close());
  beforeEach(() => rig.postcodes.reset());

  it.each([
    "../admin",
    "SW1A 2AA/../../x",
    "..%2f..%2fSW1A2AA",
    "SW1A%2f2AA",
    "SW1A 2AA?x=1",
    "SW1A 2AA#frag",
    "user@evil.example/SW1A 2AA",
    "@127.0.0.1:1/SW1A2AA",
    "SW1A 2AA\r\nHost: evil",
    "http://evil.example/",
    "SW1A 2AA%00",
    "this is not a postcode, and it is much longer than any postcode",
  ])("%j → 404 invalid_format, nothing sent upstream", async (hostile) => {
    for (const path of ["/v1/postcode", "/v1/weather"]) {
      const res = await rig.get(`${path}?postcode=${q(hostile)}`);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).error.reason).toBe("invalid_format");
    }
    expect(rig.postcodes.paths).toEqual([]);
  });

  it("a valid postcode with odd whitespace reaches upstream only as the normalised, encoded segment", async () => {
    for (const input of ["\tsw1a\t2aa ", "SW1A\n2AA", "sw1a2aa"]) {
      expect((await rig.get(`/v1/postcode?postcode=${q(input)}`)).status).toBe(200);
    }
    expect(rig.postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
  });

  it("raw, unencoded hostile characters in the query string change nothing either", async () => {
    const res = await rig.get("/v1/postcode?postcode=../../terminated_postcodes/E1W1UU");
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error.reason).toBe("invalid_format");
    expect(rig.postcodes.paths).toEqual([]);
  });
});
