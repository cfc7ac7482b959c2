import { postcodesIoSource } from "../postcode/index.js";
import type { WeatherView } from "./schema.js";
import { OPEN_METEO_SOURCE } from "./sources.js";

const day = (date: string, code: number, text: string, icon: string, min: number, max: number, rise: string) => ({
  date,
  weather: { code, text, icon },
  temperature: { min, max },
  feels_like: { min: min - 2.1, max: max - 1.4 },
  precipitation: { sum: code >= 51 ? 2.4 : 0, probability: code >= 51 ? 65 : 10 },
  wind_speed_max: 18.7,
  sunrise: rise,
  sunset: `${date}T${date < "2024-10-27" ? "17:48:00+01:00" : "16:41:00+00:00"}`,
});

/** OpenAPI example of `GET /v1/weather?postcode=SW1A2AA` (a week across the end of BST). */
export const WEATHER_EXAMPLE: WeatherView = {
  location: {
    postcode: "SW1A 2AA",
    outcode: "SW1A",
    lat: 51.50354,
    lon: -0.127695,
    latitude: 51.50354,
    longitude: -0.127695,
    district: "Westminster",
    region: "London",
    country: "England",
  },
  forecast_point: { lat: 51.5, lon: -0.12, latitude: 51.5, longitude: -0.12, elevation: 8 },
  tz: "Europe/London",
  timezone: "Europe/London",
  current: {
    observed_at: "2024-10-24T14:15:00+01:00",
    weather: { code: 2, text: "Partly cloudy", icon: "partly-cloudy-day" },
    is_day: true,
    temperature: 14.2,
    feels_like: 12.1,
    humidity: 71,
    precipitation: 0,
    wind: { speed: 11.5, direction: 230, gusts: 24.8 },
  },
  daily: [
    day("2024-10-24", 2, "Partly cloudy", "partly-cloudy-day", 9.1, 15.3, "2024-10-24T07:32:00+01:00"),
    day("2024-10-25", 3, "Overcast", "overcast", 10.2, 14.8, "2024-10-25T07:34:00+01:00"),
    day("2024-10-26", 61, "Slight rain", "rain", 8.7, 13.9, "2024-10-26T07:36:00+01:00"),
    day("2024-10-27", 80, "Slight rain showers", "showers-day", 7.4, 12.6, "2024-10-27T06:37:00+00:00"),
    day("2024-10-28", 1, "Mainly clear", "mostly-clear-day", 6.0, 12.1, "2024-10-28T06:39:00+00:00"),
    day("2024-10-29", 45, "Fog", "fog", 5.2, 11.4, "2024-10-29T06:41:00+00:00"),
    day("2024-10-30", 3, "Overcast", "overcast", 6.8, 12.9, "2024-10-30T06:43:00+00:00"),
  ],
  units: {
    temperature: "°C",
    feels_like: "°C",
    humidity: "%",
    precipitation: "mm",
    precipitation_probability: "%",
    wind_speed: "km/h",
    wind_direction: "°",
    elevation: "m",
  },
  sources: [OPEN_METEO_SOURCE, postcodesIoSource(2025)],
};
