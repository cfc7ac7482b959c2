import { DateTime } from "luxon";
import { UpstreamFake } from "./upstream-fake.js";

const CURRENT_UNITS: Record<string, string> = {
  time: "iso8601",
  interval: "seconds",
  temperature_2m: "°C",
  apparent_temperature: "°C",
  relative_humidity_2m: "%",
  precipitation: "mm",
  weather_code: "wmo code",
  wind_speed_10m: "km/h",
  wind_direction_10m: "°",
  wind_gusts_10m: "km/h",
  is_day: "",
};

const DAILY_UNITS: Record<string, string> = {
  time: "iso8601",
  weather_code: "wmo code",
  temperature_2m_max: "°C",
  temperature_2m_min: "°C",
  apparent_temperature_max: "°C",
  apparent_temperature_min: "°C",
  precipitation_sum: "mm",
  precipitation_probability_max: "%",
  wind_speed_10m_max: "km/h",
  sunrise: "iso8601",
  sunset: "iso8601",
};

const CODES = [2, 3, 61, 80, 1, 45, 3, 95, 71, 0, 51, 63, 85, 2, 3, 0];

export interface OpenMeteoOptions {
  /** First forecast day (local), default 2024-10-24: the week crosses the end of BST on the 27th. */
  start?: string;
  /** Current-conditions time (local, `YYYY-MM-DDTHH:MM`), default `${start}T14:15`. */
  now?: string;
  isDay?: 0 | 1;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Values per variable and day: deterministic, so tests can assert them. */
function dailyValue(name: string, date: string, i: number, zone: string): number | string {
  const bst = DateTime.fromISO(`${date}T12:00`, { zone }).offset === 60;
  switch (name) {
    case "time":
      return date;
    case "weather_code":
      return CODES[i % CODES.length] ?? 0;
    case "temperature_2m_max":
      return 15.3 - i * 0.5;
    case "temperature_2m_min":
      return 9.1 - i * 0.5;
    case "apparent_temperature_max":
      return 13.9 - i * 0.5;
    case "apparent_temperature_min":
      return 7 - i * 0.5;
    case "precipitation_sum":
      return i === 2 ? 2.4 : 0;
    case "precipitation_probability_max":
      return i * 10;
    case "wind_speed_10m_max":
      return 18.7 + i;
    case "sunrise":
      return `${date}T${bst ? "07" : "06"}:${pad((32 + 2 * i) % 60)}`;
    case "sunset":
      return `${date}T${bst ? "18" : "17"}:${pad(48 - 2 * i)}`;
    default:
      throw new Error(`Cannot initialize ForecastVariableDaily from invalid String value ${name}`);
  }
}

function currentValue(name: string, time: string, isDay: 0 | 1): number | string {
  const values: Record<string, number | string> = {
    time,
    interval: 900,
    temperature_2m: 14.2,
    apparent_temperature: 12.1,
    relative_humidity_2m: 71,
    precipitation: 0,
    weather_code: 2,
    wind_speed_10m: 11.5,
    wind_direction_10m: 230,
    wind_gusts_10m: 24.8,
    is_day: isDay,
  };
  const v = values[name];
  if (v === undefined) throw new Error(`Cannot initialize ForecastVariable from invalid String value ${name}`);
  return v;
}

const list = (v: string | null) => (v ? v.split(",").filter(Boolean) : []);
const bad = (reason: string) => ({ status: 400, body: { error: true, reason } });

/**
 * Open-Meteo's `GET /v1/forecast` on 127.0.0.1: answers only the variables asked for, as its
 * published JSON does (`current` values, `daily` columns, `*_units`), in the requested zone.
 */
export function fakeOpenMeteo(opts: OpenMeteoOptions = {}): Promise<UpstreamFake> {
  const start = opts.start ?? "2024-10-24";
  const now = opts.now ?? `${start}T14:15`;
  return new UpstreamFake((url) => {
    if (url.pathname !== "/v1/forecast") return { status: 404, body: { error: true, reason: "Not Found" } };
    const q = url.searchParams;
    const lat = Number(q.get("latitude"));
    const lon = Number(q.get("longitude"));
    if (!q.get("latitude") || !q.get("longitude") || !(Math.abs(lat) <= 90) || !(Math.abs(lon) <= 180)) {
      return bad("Latitude and longitude must be given and in range");
    }
    const zone = q.get("timezone") ?? "GMT";
    const days = Number(q.get("forecast_days") ?? 7);
    const first = DateTime.fromISO(start, { zone });
    const dates = Array.from({ length: days }, (_, i) => first.plus({ days: i }).toISODate() ?? "");
    try {
      const current = ["time", "interval", ...list(q.get("current"))];
      const daily = ["time", ...list(q.get("daily"))];
      return {
        status: 200,
        body: {
          latitude: Math.round(lat * 40) / 40,
          longitude: Math.round(lon * 40) / 40,
          generationtime_ms: 0.09,
          utc_offset_seconds: DateTime.fromISO(now, { zone }).offset * 60,
          timezone: zone,
          timezone_abbreviation: DateTime.fromISO(now, { zone }).toFormat("ZZZZ"),
          elevation: 8,
          current_units: Object.fromEntries(current.map((n) => [n, CURRENT_UNITS[n] ?? ""])),
          current: Object.fromEntries(current.map((n) => [n, currentValue(n, now, opts.isDay ?? 1)])),
          daily_units: Object.fromEntries(daily.map((n) => [n, DAILY_UNITS[n] ?? ""])),
          daily: Object.fromEntries(daily.map((n) => [n, dates.map((d, i) => dailyValue(n, d, i, zone))])),
        },
      };
    } catch (err) {
      return bad((err as Error).message);
    }
  }).start();
}
