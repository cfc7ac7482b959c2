import type { Forecast } from "../../ports/forecaster.js";
import type { Place } from "../../ports/postcode-resolver.js";
import type { WeatherView } from "./schema.js";
import { weatherSources } from "./sources.js";
import { describeWeather } from "./wmo.js";

/** The weather answer for a place with coordinates. Pure. */
export function weatherReport(
  place: Place & { latitude: number; longitude: number },
  f: Forecast,
  year: number,
): WeatherView {
  const c = f.current;
  return {
    location: {
      postcode: place.postcode,
      outcode: place.outcode,
      lat: place.latitude,
      lon: place.longitude,
      latitude: place.latitude,
      longitude: place.longitude,
      district: place.admin_district,
      region: place.region,
      country: place.country,
    },
    forecast_point: {
      lat: f.latitude,
      lon: f.longitude,
      latitude: f.latitude,
      longitude: f.longitude,
      elevation: f.elevation,
    },
    tz: f.timezone,
    timezone: f.timezone,
    current: {
      observed_at: c.time,
      weather: describeWeather(c.weather_code, c.is_day),
      is_day: c.is_day,
      temperature: c.temperature,
      feels_like: c.apparent_temperature,
      humidity: c.relative_humidity,
      precipitation: c.precipitation,
      wind: { speed: c.wind_speed, direction: c.wind_direction, gusts: c.wind_gusts },
    },
    daily: f.daily.map((d) => ({
      date: d.date,
      weather: describeWeather(d.weather_code, true),
      temperature: { min: d.temperature_min, max: d.temperature_max },
      feels_like: { min: d.apparent_temperature_min, max: d.apparent_temperature_max },
      precipitation: { sum: d.precipitation_sum, probability: d.precipitation_probability_max },
      wind_speed_max: d.wind_speed_max,
      sunrise: d.sunrise,
      sunset: d.sunset,
    })),
    units: {
      temperature: f.units.temperature,
      feels_like: f.units.temperature,
      humidity: f.units.relative_humidity,
      precipitation: f.units.precipitation,
      precipitation_probability: f.units.precipitation_probability,
      wind_speed: f.units.wind_speed,
      wind_direction: f.units.wind_direction,
      elevation: "m",
    },
    sources: weatherSources(year),
  };
}

/**
 * The report's JSON per forecast and place object, built once instead of on every request.
 * From the in-process cache a hit is the very same forecast (and place) object each time, so
 * this hits; from Redis each hit is a freshly parsed object and this simply misses. Entries
 * live as long as their forecast object (WeakMap), i.e. as long as its cache entry.
 */
export class ReportBodies {
  private readonly byForecast = new WeakMap<Forecast, WeakMap<Place, { year: number; body: string }>>();

  json(place: Place, at: { latitude: number; longitude: number }, forecast: Forecast, year: number): string {
    let byPlace = this.byForecast.get(forecast);
    if (!byPlace) {
      byPlace = new WeakMap();
      this.byForecast.set(forecast, byPlace);
    }
    const hit = byPlace.get(place);
    if (hit?.year === year) return hit.body;
    const body = JSON.stringify(weatherReport({ ...place, ...at }, forecast, year));
    byPlace.set(place, { year, body });
    return body;
  }
}
