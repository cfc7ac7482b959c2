import pino from "pino";
import { describe, expect, it } from "vitest";
import { createRedis } from "../../src/adapters/redis.js";
import { parseConfig } from "../../src/config.js";

const silent = pino({ level: "silent" });

describe("createRedis", () => {
  it("asks the Sentinels for the primary, with REDIS_URL's user, password and database (not its address)", () => {
    const redis = createRedis(
      parseConfig({
        REDIS_SENTINELS: "127.0.0.1:1,127.0.0.1:2",
        REDIS_SENTINEL_NAME: "almanac",
        REDIS_URL: "redis://app:secret@not-used:6390/3",
      }),
      silent,
    );
    try {
      expect(redis.options).toMatchObject({
        sentinels: [
          { host: "127.0.0.1", port: 1 },
          { host: "127.0.0.1", port: 2 },
        ],
        name: "almanac",
        role: "master",
        username: "app",
        password: "secret",
        db: 3,
        failoverDetector: true,
        enableOfflineQueue: false,
      });
    } finally {
      redis.disconnect();
    }
  });

  it("without REDIS_URL: database 0, no credentials", () => {
    const redis = createRedis(parseConfig({ REDIS_SENTINELS: "127.0.0.1:1", REDIS_SENTINEL_NAME: "almanac" }), silent);
    try {
      expect(redis.options).toMatchObject({ name: "almanac", db: 0 });
      expect(redis.options.password).toBeFalsy();
    } finally {
      redis.disconnect();
    }
  });
});
