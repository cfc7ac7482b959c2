import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { normalisePostcode, SPECIAL_POSTCODES } from "../../src/features/postcode/format.js";
import { errorOf } from "../helpers/app.js";
import { q, type WeatherRig, weatherRig } from "../weather/setup.js";

describe("postcode format: Royal Mail's letter-position rules", () => {
  it.each([
    ["M1 1AE", "M1 1AE"], // A9
    ["b338th", "B33 8TH"], // A99
    ["CR2 6XH", "CR2 6XH"], // AA9
    ["DN55 1PT", "DN55 1PT"], // AA99
    ["W1A 0AX", "W1A 0AX"], // A9A
    ["EC1A 1BB", "EC1A 1BB"], // AA9A
    ["gir0aa", "GIR 0AA"],
  ])("%j is a postcode: %j", (input, normalised) => {
    expect(normalisePostcode(input)).toBe(normalised);
  });

  it("accepts every special postcode Royal Mail issues outside the outward patterns", () => {
    for (const p of SPECIAL_POSTCODES) expect(normalisePostcode(p.toLowerCase().replace(" ", ""))).toBe(p);
  });

  it.each([
    ["Q1 1AA", "Q first"],
    ["V1 1AA", "V first"],
    ["X1 1AA", "X first"],
    ["AI1 1AA", "I second"],
    ["AJ1 1AA", "J second"],
    ["AZ1 1AA", "Z second"],
    ["W1I 1AA", "I third (A9A)"],
    ["W1L 1AA", "L third (A9A)"],
    ["EC1C 1BB", "C fourth (AA9A)"],
    ["EC1D 1BB", "D fourth (AA9A)"],
    ["SW1A 2CA", "C in the inward code"],
    ["SW1A 2AI", "I in the inward code"],
    ["SW1A 2KA", "K in the inward code"],
    ["SW1A 2AM", "M in the inward code"],
    ["SW1A 2OA", "O in the inward code"],
    ["SW1A 2AV", "V in the inward code"],
    ["SW1A 2A", "inward too short"],
    ["SWA1 2AA", "letter after letter in the outward code"],
    ["GIR 0AB", "not the Girobank code"],
    ["ASCN 2ZZ", "not a territory's code"],
  ])("%j is refused (%s)", (input) => {
    expect(normalisePostcode(input)).toBeNull();
  });
});

describe("postcode rules through HTTP", () => {
  let rig: WeatherRig;
  beforeEach(async () => {
    rig = await weatherRig();
  });
  afterEach(() => rig.close());

  it("a postcode that breaks the letter rules is 404 invalid_format with no upstream call", async () => {
    for (const bad of ["Q1 1AA", "AZ1 1AA", "SW1A 2CA"]) {
      for (const path of ["/v1/postcode", "/v1/weather"]) {
        const res = await rig.get(`${path}?postcode=${q(bad)}`);
        expect(res.status).toBe(404);
        const { error } = await errorOf(res);
        expect(error).toMatchObject({ code: "not_found", reason: "invalid_format", message: "postcode not found" });
      }
    }
    expect(rig.postcodes.paths).toEqual([]);
  });

  it("GIR 0AA and the overseas territories' postcodes are asked of the upstream, not refused", async () => {
    for (const special of ["gir 0aa", "STHL1ZZ"]) {
      const res = await rig.get(`/v1/postcode?postcode=${q(special)}`);
      // The fake does not know them: the upstream's answer (unknown), not a format refusal.
      expect(res.status).toBe(404);
      expect((await errorOf(res)).error.reason).toBe("unknown");
    }
    expect(rig.postcodes.paths.filter((p) => p.startsWith("/postcodes/"))).toEqual([
      "/postcodes/GIR%200AA",
      "/postcodes/STHL%201ZZ",
    ]);
  });
});
