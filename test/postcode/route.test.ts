import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { q, type WeatherRig, weatherRig } from "../weather/setup.js";

describe("GET /v1/postcode", () => {
  // A fresh app (and so an empty cache) per test.
  let rig: WeatherRig;
  beforeEach(async () => {
    rig = await weatherRig();
  });
  afterEach(() => rig.close());

  it("resolves a postcode in any case and spacing to its place, with attribution", async () => {
    const res = await rig.get(`/v1/postcode?postcode=${q("sw1a  2aa")}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & { sources: { attribution: string }[] };
    expect(body).toMatchObject({
      postcode: "SW1A 2AA",
      outcode: "SW1A",
      incode: "2AA",
      latitude: 51.50354,
      longitude: -0.127695,
      eastings: 530047,
      northings: 179951,
      district: "Westminster",
      county: null,
      ward: "St James's",
      constituency: "Cities of London and Westminster",
      region: "London",
      country: "England",
    });
    expect(body.sources[0]?.attribution).toContain("Contains OS data © Crown copyright and database right");
    expect(rig.postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
  });

  it("says how long a place may be kept: a day (without it a 200 is heuristically cacheable for any time)", async () => {
    const res = await rig.get("/v1/postcode?postcode=SW1A2AA");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
  });

  it("answers a place without coordinates with explicit nulls", async () => {
    const body = (await (await rig.get("/v1/postcode?postcode=GY11AA")).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ postcode: "GY1 1AA", latitude: null, longitude: null, country: "Channel Islands" });
  });

  it.each([
    ["SW1A", "invalid_format"],
    ["not a postcode", "invalid_format"],
    ["ZE9 9ZZ", "unknown"],
    ["E1W 1UU", "terminated"],
  ])("%s → 404 not_found, reason %s", async (postcode, reason) => {
    const res = await rig.get(`/v1/postcode?postcode=${q(postcode)}`);
    expect(res.status).toBe(404);
    expect((await errorOf(res)).error).toMatchObject({ code: "not_found", message: "postcode not found", reason });
  });

  it("checks the terminated list only after the live one says 404", async () => {
    await rig.get("/v1/postcode?postcode=E1W1UU");
    expect(rig.postcodes.paths).toEqual(["/postcodes/E1W%201UU", "/terminated_postcodes/E1W%201UU"]);
  });

  it("caches unknown postcodes (negative cache): a second ask makes no upstream call", async () => {
    const first = await rig.get("/v1/postcode?postcode=ZE99ZZ");
    const second = await rig.get("/v1/postcode?postcode=ze9%209zz");
    expect((await errorOf(first)).error.reason).toBe("unknown");
    expect((await errorOf(second)).error.reason).toBe("unknown");
    expect(rig.postcodes.paths).toEqual(["/postcodes/ZE9%209ZZ", "/terminated_postcodes/ZE9%209ZZ"]);
  });

  it("up to 100 characters a value is a (wrong) postcode, 404; longer is a malformed parameter, 400", async () => {
    const at = await rig.get(`/v1/postcode?postcode=${"A".repeat(100)}`);
    expect(at.status).toBe(404);
    expect((await errorOf(at)).error).toMatchObject({ code: "not_found", reason: "invalid_format" });
    const past = await rig.get(`/v1/postcode?postcode=${"A".repeat(101)}`);
    expect(past.status).toBe(400);
    expect((await errorOf(past)).error.message).toBe(
      'query parameter "postcode" is invalid: must be at most 100 characters',
    );
    expect(rig.postcodes.paths).toEqual([]);
  });

  it("400 invalid_body names the missing parameter", async () => {
    const res = await rig.get("/v1/postcode");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).error).toMatchObject({
      code: "invalid_body",
      message: 'query parameter "postcode" is required',
    });
  });
});
