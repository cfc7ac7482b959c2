import { fail, ok, type Result } from "../../lib/result.js";
import type { Cache } from "../../ports/cache.js";
import type { Forecast, Forecaster } from "../../ports/forecaster.js";
import { UpstreamError } from "../../ports/upstream-error.js";
import { CachedLoader } from "../shared/cached-loader.js";

export const FORECAST_TTL_MS = 15 * 60 * 1000;

/**
 * Forecast coordinates rounded to 0.01° (about 1 km, finer than the models' grids), so
 * neighbouring postcodes share one cache entry and one upstream call.
 */
export function roundLocation(latitude: number, longitude: number): { latitude: number; longitude: number } {
  const round = (v: number) => Math.round(v * 100) / 100;
  return { latitude: round(latitude), longitude: round(longitude) };
}

/**
 * Forecasts per rounded location, cached for 15 minutes, one upstream call per location at a time.
 * A failed forecaster is returned as a failure, not thrown (the route answers 502).
 */
export class ForecastLookup {
  private readonly loader: CachedLoader;

  constructor(
    private readonly forecaster: Forecaster,
    cache: Cache,
  ) {
    this.loader = new CachedLoader(cache);
  }

  async at(latitude: number, longitude: number): Promise<Result<Forecast, { kind: "upstream"; cause: UpstreamError }>> {
    const loc = roundLocation(latitude, longitude);
    const key = `forecast:v1:${loc.latitude.toFixed(2)},${loc.longitude.toFixed(2)}`;
    try {
      return ok(
        await this.loader.load(
          key,
          () => FORECAST_TTL_MS,
          () => this.forecaster.forecast(loc.latitude, loc.longitude),
        ),
      );
    } catch (err) {
      if (err instanceof UpstreamError) return fail({ kind: "upstream", cause: err });
      throw err;
    }
  }
}
