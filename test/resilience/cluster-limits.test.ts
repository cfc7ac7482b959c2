import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, skipReason, tempDir } from "../helpers/env.js";
import { type ServerProcess, spawnCli, spawnServer, stop } from "../helpers/process.js";
import {
  type Answer,
  call,
  classify,
  clearDemoCounter,
  createKey,
  pidsOf,
  uniqueLoopback,
  verdicts,
  workersListening,
} from "../scale/support.js";

const DEMO_LIMIT = 10;
const DEMO_PATH = "/v1/holidays?country=GB&year=2024";
const repeat = (n: number, v: string) => Array.from({ length: n }, () => v);
const sorted = <T>(xs: Iterable<T>): T[] => [...xs].sort();
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * `WEB_CONCURRENCY=2` as a real process tree (primary + 2 workers). Each request goes on a fresh
 * connection, so the primary deals them out round-robin; the request log lines (with `pid`)
 * show which worker answered.
 */
function clusterSuite(name: string, env: () => Record<string, string>, clearCounter?: (ip: string) => Promise<void>) {
  let server: ServerProcess;
  let workers: number[];
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    const dataDir = tempDir();
    // The CLI writes to the same SQLite file the workers read.
    cliEnv = { DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "" };
    server = await spawnServer(
      {
        DATA_DIR: dataDir,
        DATABASE_URL: "",
        WEB_CONCURRENCY: "2",
        LOG_LEVEL: "info",
        DEMO_HOURLY_LIMIT: String(DEMO_LIMIT),
        ...env(),
      },
      { startTimeoutMs: 60_000 },
    );
    workers = await workersListening(server, 2);
  }, 120_000);

  afterAll(() => stop(server));

  const answeredBy = async (answers: Answer[]) =>
    sorted(
      await pidsOf(
        server,
        answers.map((a) => a.requestId),
      ),
    );

  it(`${name}: the demo tier allows exactly ${DEMO_LIMIT} calls across both workers, then 429`, async () => {
    const ip = uniqueLoopback();
    await clearCounter?.(ip);
    const answers = [];
    for (let i = 0; i < DEMO_LIMIT * 2; i++) answers.push(await call(server.url, DEMO_PATH, { localAddress: ip }));
    expect(verdicts(answers)).toEqual([...repeat(DEMO_LIMIT, "200"), ...repeat(DEMO_LIMIT, "429 DEMO_HOURLY_LIMIT")]);
    expect(await answeredBy(answers)).toEqual(sorted(workers));
    await clearCounter?.(ip);
  });

  it(`${name}: a key with 5 uses gives exactly 5 successes from 20 parallel calls`, async () => {
    const key = await createKey(cliEnv, "--remaining", "5");
    const answers = await Promise.all(Array.from({ length: 20 }, () => classify(server.url, key.key)));
    expect(sorted(verdicts(answers))).toEqual(sorted([...repeat(5, "200"), ...repeat(15, "429 USAGE_EXCEEDED")]));
    expect(await answeredBy(answers)).toEqual(sorted(workers));
  });

  it(`${name}: a key limited to 3 calls a minute gives exactly 3 successes from 8 parallel calls`, async () => {
    const key = await createKey(cliEnv, "--ratelimit", "3/60");
    const answers = await Promise.all(Array.from({ length: 8 }, () => classify(server.url, key.key)));
    expect(sorted(verdicts(answers))).toEqual(sorted([...repeat(3, "200"), ...repeat(5, "429 RATE_LIMITED")]));
    expect(await answeredBy(answers)).toEqual(sorted(workers));
  });

  it(`${name}: SIGTERM stops the workers and the primary exits 0`, async () => {
    expect(await stop(server)).toBe(0);
    expect(workers.filter(alive)).toEqual([]);
  });
}

// Real process trees started through tsx: slow on a busy machine.
describe("WEB_CONCURRENCY=2 on SQLite without Redis (the workers share DATA_DIR/limits.db)", {
  timeout: 120_000,
}, () => {
  clusterSuite("embedded limiter", () => ({ REDIS_URL: "" }));
});

describe.skipIf(!REDIS_URL)(
  `WEB_CONCURRENCY=2 with Redis ${skipReason({ redis: true }) ?? ""}`,
  { timeout: 120_000 },
  () => {
    clusterSuite(
      "Redis limiter",
      () => ({ REDIS_URL: REDIS_URL as string }),
      (ip) => clearDemoCounter(REDIS_URL as string, ip),
    );
  },
);

describe("WEB_CONCURRENCY=2 that cannot start", () => {
  it("WEB_CONCURRENCY=2 on a port in use: says so and exits 1 (no worker left hanging, none forked again)", {
    timeout: 90_000,
  }, async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => taken.once("listening", r));
    const port = String((taken.address() as { port: number }).port);
    try {
      const run = await spawnCli(["serve"], {
        DATA_DIR: tempDir(),
        HOST: "127.0.0.1",
        PORT: port,
        WEB_CONCURRENCY: "2",
        LOG_LEVEL: "silent",
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`almanac: bind EADDRINUSE 127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
  });
});
