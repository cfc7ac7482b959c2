import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type WeatherRig, weatherRig } from "./setup.js";

/** Holds `fake`'s answers until it has seen one request and the others have had time to queue behind it. */
async function overlapping(fake: UpstreamFake, requests: () => Promise<Response>[]): Promise<Response[]> {
  fake.gate();
  const pending = requests();
  while (fake.paths.length === 0) await new Promise((r) => setTimeout(r, 5));
  // Not a timing assertion: extra time only gives a broken single flight the chance to show itself.
  await new Promise((r) => setTimeout(r, 100));
  fake.release();
  return Promise.all(pending);
}

describe("concurrent misses share one upstream call", () => {
  let rig: WeatherRig;
  beforeEach(async () => {
    rig = await weatherRig();
  });
  afterEach(() => rig.close());

  it("10 concurrent /v1/postcode requests for one postcode → 1 postcodes.io call", async () => {
    const spellings = ["SW1A 2AA", "sw1a2aa", "Sw1A 2aA"];
    const answers = await overlapping(rig.postcodes, () =>
      Array.from({ length: 10 }, (_, i) =>
        rig.get(`/v1/postcode?postcode=${encodeURIComponent(spellings[i % 3] ?? "")}`),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(rig.postcodes.paths).toEqual(["/postcodes/SW1A%202AA"]);
  });

  it("10 concurrent /v1/weather requests → 1 postcodes.io call and 1 Open-Meteo call", async () => {
    rig.meteo.gate();
    const pending = Array.from({ length: 10 }, () => rig.get("/v1/weather?postcode=EH11YZ"));
    while (rig.meteo.paths.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    rig.meteo.release();
    const answers = await Promise.all(pending);
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(rig.postcodes.paths).toHaveLength(1);
    expect(rig.meteo.paths).toHaveLength(1);
  });

  it("a shared failure fails every waiter with 502, and is not cached", async () => {
    rig.postcodes.fault = "500";
    const answers = await overlapping(rig.postcodes, () =>
      Array.from({ length: 5 }, () => rig.get("/v1/postcode?postcode=SW1A2AA")),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(502));
    expect(rig.postcodes.paths).toHaveLength(1);
    rig.postcodes.fault = null;
    expect((await rig.get("/v1/postcode?postcode=SW1A2AA")).status).toBe(200);
  });
});
