import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, resolveAuthSecret, usesRedis } from "../src/config.js";
import { tempDir } from "./helpers/env.js";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const c = parseConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.HOST).toBe("0.0.0.0");
    expect(c.DEMO_HOURLY_LIMIT).toBe(60);
    expect(c.KEY_PERMISSION).toBe("vibe.classify");
    expect(c.UNKEY_BASE_URL).toBe("https://api.unkey.com");
    expect(c.UPSTREAM_TIMEOUT_MS).toBe(3000);
    expect(c.PUBLIC_URL).toBe("http://localhost:8080");
    expect(c.TRUST_PROXY).toBe(0);
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it("treats empty values as unset", () => {
    expect(parseConfig({ PORT: "", REDIS_URL: "" }).PORT).toBe(8080);
  });

  it("lists every bad variable by name", () => {
    let err: unknown;
    try {
      parseConfig({ PORT: "eighty", DATABASE_URL: "mysql://x", DEMO_HOURLY_LIMIT: "-1", MAIL_URL: "http://x" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    for (const name of ["PORT", "DATABASE_URL", "DEMO_HOURLY_LIMIT", "MAIL_URL"]) expect(message).toContain(name);
    expect(message).toContain("DATABASE_URL: must be a postgres or postgresql URL");
  });

  it("takes a number only as decimal digits, and says the range", () => {
    for (const port of ["0x10", "1e3", " 80", "80 ", "1.5", "eighty", "-1", "70000", "+80"]) {
      expect(() => parseConfig({ PORT: port }), port).toThrow(
        new ConfigError(["PORT: must be a whole number from 0 to 65535"]),
      );
    }
    expect(parseConfig({ PORT: "0080" }).PORT).toBe(80);
    expect(() => parseConfig({ TRUST_PROXY: "1e1" })).toThrow("TRUST_PROXY: must be a whole number from 0 to 10");
  });

  it("requires both halves of an identity provider's credentials", () => {
    expect(() => parseConfig({ GITHUB_CLIENT_ID: "id" })).toThrow(
      /GITHUB_CLIENT_SECRET: required when GITHUB_CLIENT_ID/,
    );
  });

  it("reads Redis Sentinels as a list of addresses, with their primary's name, and refuses half of it", () => {
    const cfg = parseConfig({
      REDIS_SENTINELS: "10.0.0.1:26379, sentinel-b:26380,[::1]:5000,s3",
      REDIS_SENTINEL_NAME: "almanac",
    });
    expect(cfg.REDIS_SENTINELS).toEqual([
      { host: "10.0.0.1", port: 26379 },
      { host: "sentinel-b", port: 26380 },
      { host: "::1", port: 5000 },
      { host: "s3", port: 26379 },
    ]);
    expect(usesRedis(cfg)).toBe(true);
    expect(usesRedis(parseConfig({}))).toBe(false);
    expect(() => parseConfig({ REDIS_SENTINELS: "s1:26379" })).toThrow(
      /REDIS_SENTINEL_NAME: required when REDIS_SENTINELS/,
    );
    expect(() => parseConfig({ REDIS_SENTINEL_NAME: "almanac" })).toThrow(
      /REDIS_SENTINELS: required when REDIS_SENTINEL_NAME/,
    );
    for (const bad of ["s1:0", "s1:70000", "s1:26379,", "redis://s1:26379", "s1 s2"]) {
      expect(() => parseConfig({ REDIS_SENTINELS: bad, REDIS_SENTINEL_NAME: "almanac" }), bad).toThrow(
        /REDIS_SENTINELS: ".*" is not host:port/,
      );
    }
    expect(() => parseConfig({ REDIS_SENTINELS: "s1", REDIS_SENTINEL_NAME: "my master" })).toThrow(
      /REDIS_SENTINEL_NAME: must be/,
    );
    // REDIS_URL beside them gives the primary's credentials and database, not its address; not TLS.
    expect(
      parseConfig({ REDIS_SENTINELS: "s1", REDIS_SENTINEL_NAME: "m", REDIS_URL: "redis://:pw@ignored/2" }).REDIS_URL,
    ).toBe("redis://:pw@ignored/2");
    expect(() => parseConfig({ REDIS_SENTINELS: "s1", REDIS_SENTINEL_NAME: "m", REDIS_URL: "rediss://:pw@x" })).toThrow(
      /REDIS_URL: rediss:\/\/ \(TLS\) is not supported with REDIS_SENTINELS/,
    );
  });

  it("generates AUTH_SECRET into DATA_DIR once and keeps it", () => {
    const c = parseConfig({ DATA_DIR: tempDir() });
    const first = resolveAuthSecret(c);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(resolveAuthSecret(c)).toBe(first);
    expect(resolveAuthSecret({ ...c, AUTH_SECRET: "x".repeat(40) })).toBe("x".repeat(40));
  });
});
