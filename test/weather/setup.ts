import { fakeOpenMeteo, type OpenMeteoOptions } from "../fakes/open-meteo.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { type TestApp, testApp } from "../helpers/app.js";

export interface WeatherRig {
  app: TestApp["app"];
  t: TestApp;
  postcodes: UpstreamFake;
  meteo: UpstreamFake;
  get(path: string): Promise<Response>;
  close(): Promise<void>;
}

/** The real app with postcodes.io and Open-Meteo pointed at fakes on 127.0.0.1. */
export async function weatherRig(env: Record<string, string> = {}, meteoOpts?: OpenMeteoOptions): Promise<WeatherRig> {
  const postcodes = await fakePostcodesIo();
  const meteo = await fakeOpenMeteo(meteoOpts);
  const t = await testApp({
    POSTCODES_BASE_URL: postcodes.url,
    OPEN_METEO_BASE_URL: meteo.url,
    DEMO_HOURLY_LIMIT: "1000000",
    ...env,
  });
  return {
    app: t.app,
    t,
    postcodes,
    meteo,
    get: async (path) => t.app.request(path),
    close: async () => {
      await t.close();
      await Promise.all([postcodes.close(), meteo.close()]);
    },
  };
}

export const q = (postcode: string) => encodeURIComponent(postcode);
