import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnServer, stop } from "../helpers/process.js";

/**
 * The demo tier's per-IP count is kept in DATA_DIR/limits.db without Redis, so a restart (even a
 * `kill -9`) does not hand a client a fresh hour. Both lanes count: the first call of a path is
 * answered by the app, repeats of it by the hot lane.
 */
describe("the demo tier keeps its count across restarts (embedded, no Redis)", () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    if (server?.proc.exitCode === null) server.proc.kill("SIGKILL");
    await server?.exited;
  });

  /** The `r=` of the RateLimit header of `n` calls, in order. */
  async function remaining(url: string, n: number): Promise<number[]> {
    const left: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${url}/v1/moon?date=2024-05-0${(i % 2) + 1}`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      left.push(Number(/;r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1]));
    }
    return left;
  }

  it.each(["SIGKILL", "SIGTERM"] as const)(
    "%s, then the same data directory: the count goes on",
    async (signal) => {
      const env = { DATA_DIR: tempDir(), DEMO_HOURLY_LIMIT: "10" };
      server = await spawnServer(env);
      expect(await remaining(server.url, 4)).toEqual([9, 8, 7, 6]);
      if (signal === "SIGKILL") {
        server.proc.kill("SIGKILL");
        await server.exited;
      } else {
        expect(await stop(server)).toBe(0);
      }
      server = await spawnServer(env);
      expect(await remaining(server.url, 2)).toEqual([5, 4]);
    },
    120_000,
  );
});
