import { describe, expect, it } from "vitest";
import { MemoryCache } from "../../src/adapters/cache.js";
import { PlaceLookup, placeFailureError } from "../../src/features/postcode/index.js";
import type { Place, Resolution } from "../../src/ports/postcode-resolver.js";
import { UpstreamError } from "../../src/ports/upstream-error.js";

const place: Place = {
  postcode: "SW1A 2AA",
  outcode: "SW1A",
  incode: "2AA",
  latitude: 51.5,
  longitude: -0.12,
  eastings: null,
  northings: null,
  country: "England",
  region: "London",
  admin_district: null,
  admin_county: null,
  admin_ward: null,
  parish: null,
  parliamentary_constituency: null,
};

const lookup = (resolve: (postcode: string) => Promise<Resolution>) => new PlaceLookup({ resolve }, new MemoryCache());

describe("PlaceLookup returns its failures as values", () => {
  it("a place, or not_found with the reason (and a retired postcode's details)", async () => {
    const answers: Record<string, Resolution> = {
      "SW1A 2AA": { kind: "found", place },
      "EC1A 1AA": { kind: "unknown" },
      "AB1 0AA": { kind: "terminated", postcode: "AB1 0AA", year: 2002, month: 7 },
    };
    const places = lookup(async (postcode) => answers[postcode] ?? { kind: "unknown" });
    expect(await places.find("sw1a2aa")).toEqual({ ok: true, value: place });
    expect(await places.find("not a postcode")).toEqual({
      ok: false,
      error: { kind: "not_found", reason: "invalid_format" },
    });
    expect(await places.find("EC1A1AA")).toEqual({ ok: false, error: { kind: "not_found", reason: "unknown" } });
    expect(await places.find("AB10AA")).toEqual({
      ok: false,
      error: {
        kind: "not_found",
        reason: "terminated",
        details: { postcode: "AB1 0AA", year_terminated: 2002, month_terminated: 7 },
      },
    });
  });

  it("a failed resolver is an upstream failure carrying its error; anything else still throws", async () => {
    const down = new UpstreamError("postcodes.io", "status", "HTTP 500", { status: 500 });
    const failed = await lookup(() => Promise.reject(down)).find("SW1A 2AA");
    expect(failed).toEqual({ ok: false, error: { kind: "upstream", cause: down } });
    await expect(lookup(() => Promise.reject(new TypeError("bug"))).find("SW1A 2AA")).rejects.toThrow("bug");
  });

  it("the routes' answers: the spec's 404 with its reason, or 502 upstream_error", () => {
    const terminated = placeFailureError({ kind: "not_found", reason: "terminated", details: { postcode: "AB1 0AA" } });
    expect([terminated.status, terminated.code, terminated.message, terminated.reason, terminated.details]).toEqual([
      404,
      "not_found",
      "postcode not found",
      "terminated",
      { postcode: "AB1 0AA" },
    ]);
    const cause = new UpstreamError("postcodes.io", "timeout", "timed out");
    const upstream = placeFailureError({ kind: "upstream", cause });
    expect([upstream.status, upstream.code, upstream.message, upstream.cause]).toEqual([
      502,
      "upstream_error",
      "The postcode resolver failed; try again shortly.",
      cause,
    ]);
  });
});
