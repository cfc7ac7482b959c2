import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CachedLoader } from "../../src/features/shared/cached-loader.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type WeatherRig, weatherRig } from "./setup.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

/**
 * Holds `fake`'s answers until every one of `requests` has asked the cached loader for a `prefix`
 * key and the fake has seen a call, then releases it. The counts are taken at the release: all
 * requests were waiting on the held call(s), so the fake's final count says whether they shared one.
 */
async function overlapping(
  fake: UpstreamFake,
  prefix: string,
  requests: () => Promise<Response>[],
): Promise<{ answers: Response[]; askedAtRelease: number }> {
  const loads = vi.spyOn(CachedLoader.prototype, "load");
  try {
    fake.gate();
    const pending = requests();
    const asked = () => loads.mock.calls.filter(([key]) => key.startsWith(prefix)).length;
    while (asked() < pending.length || fake.paths.length === 0) await tick();
    const askedAtRelease = asked();
    fake.release();
    return { answers: await Promise.all(pending), askedAtRelease };
  } finally {
    loads.mockRestore();
  }
}

describe("concurrent misses share one upstream call", () => {
  let rig: WeatherRig;
  beforeEach(async () => {
    rig = await weatherRig();
  });
  afterEach(() => rig.close());

  it("10 concurrent /v1/postcode requests for one postcode → 1 postcodes.io call", async () => {
    const spellings = ["SW1A 2AA", "sw1a2aa", "Sw1A 2aA"];
    const { answers, askedAtRelease } = await overlapping(rig.postcodes, "postcode:", () =>
      Array.from({ length: 10 }, (_, i) =>
        rig.get(`/v1/postcode?postcode=${encodeURIComponent(spellings[i % 3] ?? "")}`),
      ),
    );
    expect(askedAtRelease).toBe(10);
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(rig.postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
  });

  it("10 concurrent /v1/weather requests → 1 postcodes.io call and 1 Open-Meteo call", async () => {
    const { answers, askedAtRelease } = await overlapping(rig.meteo, "forecast:", () =>
      Array.from({ length: 10 }, () => rig.get("/v1/weather?postcode=EH11YZ")),
    );
    expect(askedAtRelease).toBe(10);
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(rig.postcodes.paths).toHaveLength(1);
    expect(rig.meteo.paths).toHaveLength(1);
  });

  it("a shared failure fails every waiter with 502, and is not cached", async () => {
    rig.postcodes.fault = "500";
    const { answers, askedAtRelease } = await overlapping(rig.postcodes, "postcode:", () =>
      Array.from({ length: 5 }, () => rig.get("/v1/postcode?postcode=SW1A2AA")),
    );
    expect(askedAtRelease).toBe(5);
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(502));
    expect(rig.postcodes.paths).toHaveLength(1);
    rig.postcodes.fault = null;
    expect((await rig.get("/v1/postcode?postcode=SW1A2AA")).status).toBe(200);
  });
});
