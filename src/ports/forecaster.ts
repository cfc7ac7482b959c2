/** Times are ISO 8601 with the offset in force at that instant; dates are `YYYY-MM-DD`. */
export interface CurrentConditions {
  time: string;
  weather_code: number | null;
  is_day: boolean | null;
  temperature: number | null;
  apparent_temperature: number | null;
  relative_humidity: number | null;
  precipitation: number | null;
  wind_speed: number | null;
  wind_direction: number | null;
  wind_gusts: number | null;
}

export interface DailyForecast {
  date: string;
  weather_code: number | null;
  temperature_max: number | null;
  temperature_min: number | null;
  apparent_temperature_max: number | null;
  apparent_temperature_min: number | null;
  precipitation_sum: number | null;
  precipitation_probability_max: number | null;
  wind_speed_max: number | null;
  sunrise: string | null;
  sunset: string | null;
}

/** The unit of each quantity exactly as the provider stated it (e.g. `°C`, `km/h`). */
export interface ForecastUnits {
  temperature: string;
  relative_humidity: string;
  precipitation: string;
  precipitation_probability: string;
  wind_speed: string;
  wind_direction: string;
}

export interface Forecast {
  /** The model grid cell the provider answered for (near, not equal to, the request). */
  latitude: number;
  longitude: number;
  elevation: number | null;
  timezone: string;
  current: CurrentConditions;
  daily: DailyForecast[];
  units: ForecastUnits;
}

/** Current conditions and a 7-day daily forecast in Europe/London time. Throws `UpstreamError`. */
export interface Forecaster {
  forecast(latitude: number, longitude: number): Promise<Forecast>;
}
