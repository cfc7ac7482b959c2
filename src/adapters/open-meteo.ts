import { DateTime, IANAZone } from "luxon";
import { z } from "zod";
import type { DailyForecast, Forecast, Forecaster } from "../ports/forecaster.js";
import type { Metrics } from "../ports/metrics.js";
import { getJson, type UpstreamOptions, upstreamFailure } from "./upstream-http.js";

export const TIMEZONE = "Europe/London";
export const FORECAST_DAYS = 7;

const CURRENT = [
  "temperature_2m",
  "apparent_temperature",
  "relative_humidity_2m",
  "precipitation",
  "weather_code",
  "wind_speed_10m",
  "wind_direction_10m",
  "wind_gusts_10m",
  "is_day",
] as const;

const DAILY = [
  "weather_code",
  "temperature_2m_max",
  "temperature_2m_min",
  "apparent_temperature_max",
  "apparent_temperature_min",
  "precipitation_sum",
  "precipitation_probability_max",
  "wind_speed_10m_max",
  "sunrise",
  "sunset",
] as const;

const num = z.number().nullable();
const column = z.array(num);
const localTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);

/** Open-Meteo's JSON: `current` values, and `daily` as one array per variable (columnar). */
const ForecastBody = z.object({
  latitude: z.number(),
  longitude: z.number(),
  elevation: z.number().nullish(),
  timezone: z.string(),
  current_units: z.record(z.string(), z.string()),
  current: z.object({
    time: localTime,
    temperature_2m: num,
    apparent_temperature: num,
    relative_humidity_2m: num,
    precipitation: num,
    weather_code: num,
    wind_speed_10m: num,
    wind_direction_10m: num,
    wind_gusts_10m: num,
    is_day: num,
  }),
  daily_units: z.record(z.string(), z.string()),
  daily: z.object({
    time: z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/)),
    weather_code: column,
    temperature_2m_max: column,
    temperature_2m_min: column,
    apparent_temperature_max: column,
    apparent_temperature_min: column,
    precipitation_sum: column,
    precipitation_probability_max: column,
    wind_speed_10m_max: column,
    sunrise: z.array(localTime.nullable()),
    sunset: z.array(localTime.nullable()),
  }),
});
type Body = z.infer<typeof ForecastBody>;

/** Local wall time in `zone` → ISO 8601 with the offset in force then (DST-correct per instant). */
function withOffset(local: string, zone: string): string {
  return DateTime.fromISO(local, { zone }).toISO({ suppressMilliseconds: true }) ?? local;
}

function toForecast(b: Body): Forecast {
  const zone = b.timezone;
  const d = b.daily;
  const daily: DailyForecast[] = d.time.map((date, i) => ({
    date,
    weather_code: d.weather_code[i] ?? null,
    temperature_max: d.temperature_2m_max[i] ?? null,
    temperature_min: d.temperature_2m_min[i] ?? null,
    apparent_temperature_max: d.apparent_temperature_max[i] ?? null,
    apparent_temperature_min: d.apparent_temperature_min[i] ?? null,
    precipitation_sum: d.precipitation_sum[i] ?? null,
    precipitation_probability_max: d.precipitation_probability_max[i] ?? null,
    wind_speed_max: d.wind_speed_10m_max[i] ?? null,
    sunrise: d.sunrise[i] ? withOffset(d.sunrise[i] as string, zone) : null,
    sunset: d.sunset[i] ? withOffset(d.sunset[i] as string, zone) : null,
  }));
  const c = b.current;
  const cu = b.current_units;
  const du = b.daily_units;
  return {
    latitude: b.latitude,
    longitude: b.longitude,
    elevation: b.elevation ?? null,
    timezone: zone,
    current: {
      time: withOffset(c.time, zone),
      weather_code: c.weather_code,
      is_day: c.is_day === null ? null : c.is_day === 1,
      temperature: c.temperature_2m,
      apparent_temperature: c.apparent_temperature,
      relative_humidity: c.relative_humidity_2m,
      precipitation: c.precipitation,
      wind_speed: c.wind_speed_10m,
      wind_direction: c.wind_direction_10m,
      wind_gusts: c.wind_gusts_10m,
    },
    daily,
    units: {
      temperature: cu.temperature_2m ?? "°C",
      relative_humidity: cu.relative_humidity_2m ?? "%",
      precipitation: cu.precipitation ?? "mm",
      precipitation_probability: du.precipitation_probability_max ?? "%",
      wind_speed: cu.wind_speed_10m ?? "km/h",
      wind_direction: cu.wind_direction_10m ?? "°",
    },
  };
}

/** Open-Meteo `GET /v1/forecast`: current conditions and 7 days, in Europe/London time. */
export class OpenMeteoForecaster implements Forecaster {
  private readonly upstream: UpstreamOptions;

  constructor(opts: { baseUrl: string; timeoutMs: number; maxBytes: number; metrics: Metrics }) {
    this.upstream = { name: "open-meteo", ...opts };
  }

  async forecast(latitude: number, longitude: number): Promise<Forecast> {
    const query = new URLSearchParams({
      latitude: String(latitude),
      longitude: String(longitude),
      current: CURRENT.join(","),
      daily: DAILY.join(","),
      timezone: TIMEZONE,
      forecast_days: String(FORECAST_DAYS),
    });
    const reply = await getJson(this.upstream, `/v1/forecast?${query}`);
    if (reply.status !== 200) return upstreamFailure(this.upstream, "status", `status ${reply.status}`, reply.status);
    const parsed = ForecastBody.safeParse(reply.body);
    if (!parsed.success || !IANAZone.isValidZone(parsed.data.timezone)) {
      return upstreamFailure(this.upstream, "garbage", "unexpected body");
    }
    const columns = Object.values(parsed.data.daily);
    if (columns.some((col) => col.length !== parsed.data.daily.time.length)) {
      return upstreamFailure(this.upstream, "garbage", "daily columns of unequal length");
    }
    return toForecast(parsed.data);
  }
}
