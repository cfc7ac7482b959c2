/**
 * WMO weather interpretation codes (WMO 4677, as Open-Meteo uses them) → text and an icon key.
 * Icon keys name a condition; the clear and partly cloudy ones (and showers) come in `-day` and
 * `-night` variants, chosen by `is_day`.
 */
const TABLE: Record<number, { text: string; icon: string; dayNight?: true }> = {
  0: { text: "Clear sky", icon: "clear", dayNight: true },
  1: { text: "Mainly clear", icon: "mostly-clear", dayNight: true },
  2: { text: "Partly cloudy", icon: "partly-cloudy", dayNight: true },
  3: { text: "Overcast", icon: "overcast" },
  45: { text: "Fog", icon: "fog" },
  48: { text: "Depositing rime fog", icon: "fog" },
  51: { text: "Light drizzle", icon: "drizzle" },
  53: { text: "Moderate drizzle", icon: "drizzle" },
  55: { text: "Dense drizzle", icon: "drizzle" },
  56: { text: "Light freezing drizzle", icon: "freezing-drizzle" },
  57: { text: "Dense freezing drizzle", icon: "freezing-drizzle" },
  61: { text: "Slight rain", icon: "rain" },
  63: { text: "Moderate rain", icon: "rain" },
  65: { text: "Heavy rain", icon: "heavy-rain" },
  66: { text: "Light freezing rain", icon: "freezing-rain" },
  67: { text: "Heavy freezing rain", icon: "freezing-rain" },
  71: { text: "Slight snowfall", icon: "snow" },
  73: { text: "Moderate snowfall", icon: "snow" },
  75: { text: "Heavy snowfall", icon: "heavy-snow" },
  77: { text: "Snow grains", icon: "snow" },
  80: { text: "Slight rain showers", icon: "showers", dayNight: true },
  81: { text: "Moderate rain showers", icon: "showers", dayNight: true },
  82: { text: "Violent rain showers", icon: "heavy-rain" },
  85: { text: "Slight snow showers", icon: "snow-showers", dayNight: true },
  86: { text: "Heavy snow showers", icon: "heavy-snow" },
  95: { text: "Thunderstorm", icon: "thunderstorm" },
  96: { text: "Thunderstorm with slight hail", icon: "thunderstorm-hail" },
  99: { text: "Thunderstorm with heavy hail", icon: "thunderstorm-hail" },
};

export interface WeatherCondition {
  code: number | null;
  text: string;
  icon: string;
}

/** Text and icon key for a WMO code; `isDay` null (unknown) picks the day variant. */
export function describeWeather(code: number | null, isDay: boolean | null): WeatherCondition {
  const entry = code === null ? undefined : TABLE[code];
  if (!entry) return { code, text: "Unknown", icon: "unknown" };
  const icon = entry.dayNight ? `${entry.icon}-${isDay === false ? "night" : "day"}` : entry.icon;
  return { code, text: entry.text, icon };
}
