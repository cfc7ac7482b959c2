import { describe, expect, it } from "vitest";
import { describeWeather } from "./wmo.js";

describe("describeWeather", () => {
  it("picks day and night variants only for conditions that have them", () => {
    expect(describeWeather(0, false)).toEqual({ code: 0, text: "Clear sky", icon: "clear-night" });
    expect(describeWeather(0, true).icon).toBe("clear-day");
    expect(describeWeather(0, null).icon).toBe("clear-day");
    expect(describeWeather(45, false)).toEqual({ code: 45, text: "Fog", icon: "fog" });
    expect(describeWeather(99, true)).toEqual({
      code: 99,
      text: "Thunderstorm with heavy hail",
      icon: "thunderstorm-hail",
    });
  });

  it("says unknown for codes outside WMO 4677's table and for missing codes", () => {
    expect(describeWeather(42, true)).toEqual({ code: 42, text: "Unknown", icon: "unknown" });
    expect(describeWeather(null, true)).toEqual({ code: null, text: "Unknown", icon: "unknown" });
  });
});
