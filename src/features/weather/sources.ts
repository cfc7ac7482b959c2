import { postcodesIoSource, type Source } from "../postcode/index.js";

/** Open-Meteo's data is CC BY 4.0: the attribution must be shown with it. */
export const OPEN_METEO_SOURCE: Source = {
  name: "Open-Meteo",
  url: "https://open-meteo.com/",
  licence: "CC BY 4.0",
  licence_url: "https://creativecommons.org/licenses/by/4.0/",
  attribution: "Weather data by Open-Meteo.com",
};

export function weatherSources(year: number): Source[] {
  return [OPEN_METEO_SOURCE, postcodesIoSource(year)];
}
