import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EmbeddedKeyStore } from "../../src/adapters/keys/embedded.js";
import { MemoryRateLimiter } from "../../src/adapters/memory-limiter.js";
import { type Database, openDatabase } from "../../src/db/database.js";
import { migrate } from "../../src/db/migrations.js";
import { AccountQuotas } from "../../src/features/keys/account-quota.js";
import { FakeClassifierProvider } from "../fakes/classifier-provider.js";
import { tempDir } from "../helpers/env.js";
import { PERMISSION, remainingOf, until } from "../helpers/key-stores.js";
import { type ServerProcess, spawnServer } from "../helpers/process.js";

const USES = 10;
const SHORT_LEASE = { IDEMPOTENCY_LEASE_MS: "1000", IDEMPOTENCY_WAIT_MS: "20000" };
/** IDEMPOTENCY_LEASE_MS and IDEMPOTENCY_WAIT_MS left at their defaults (6 s, 5 s). */
const DEFAULT_LEASE = {};

let provider: FakeClassifierProvider;
let dataDir: string;
let database: Database;
let keys: EmbeddedKeyStore;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  provider = await new FakeClassifierProvider().start();
});
afterAll(() => provider.close());
beforeEach(async () => {
  dataDir = tempDir();
  database = openDatabase({ dataDir, logger: pino({ level: "silent" }) });
  await migrate(database.db);
  keys = new EmbeddedKeyStore(database.db, new MemoryRateLimiter(), new AccountQuotas(database.db));
});
afterEach(async () => {
  provider.release();
  provider.calls.length = 0;
  for (const s of servers.splice(0)) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGKILL");
  await database.close();
});

/**
 * `almanac serve` on the shared SQLite data directory, classifying through the gateable fake; with
 * a short lease and a long wait unless `env` is `DEFAULT_LEASE`.
 */
const serve = (env: Record<string, string> = SHORT_LEASE) =>
  spawnServer(
    {
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      CLASSIFIER_URL: `${provider.url}/models/sentiment`,
      UPSTREAM_TIMEOUT_MS: "30000",
      ...env,
    },
    { startTimeoutMs: 60_000 },
  ).then((s) => {
    servers.push(s);
    return s;
  });

const post = (s: ServerProcess, key: string) =>
  fetch(`${s.url}/v1/vibe/classify`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Idempotency-Key": "cut-1", "Content-Type": "application/json" },
    body: JSON.stringify(["so good"]),
  });

/** Starts a classify call on `s` and waits until its job is running (the classifier holds it), charged. */
async function cutMidJob(s: ServerProcess, key: string, id: string): Promise<{ cut: Promise<unknown> }> {
  provider.gate();
  const cut = post(s, key).catch((err: Error) => err);
  expect(
    await until(
      () => provider.calls.length,
      (n) => n > 0,
    ),
  ).toBe(1);
  expect(await remainingOf(keys, id)).toBe(USES - 1);
  return { cut };
}

/** After the first process is gone: a retry on `next` runs the job and answers 200, once in all. */
async function retryRuns(next: ServerProcess, key: string, id: string) {
  provider.release();
  const retry = await post(next, key);
  expect(retry.status).toBe(200);
  expect(retry.headers.get("idempotent-replayed")).toBeNull();
  expect(await remainingOf(keys, id)).toBe(USES - 1);
  const replay = await post(next, key);
  expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
  expect(await remainingOf(keys, id)).toBe(USES - 1);
}

/**
 * A client retrying after a crash: each retry waits for the claim (IDEMPOTENCY_WAIT_MS), and after
 * a 409 it retries as its Retry-After says, until `withinMs` has passed since `since`. The answers.
 */
async function retryAsAClientWould(next: ServerProcess, key: string, since: number, withinMs: number) {
  const statuses: number[] = [];
  for (;;) {
    const res = await post(next, key);
    statuses.push(res.status);
    if (res.status !== 409 || Date.now() - since > withinMs) return { res, statuses };
    await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? "1") * 1000));
  }
}

describe("a request cut mid-job does not lock its Idempotency-Key, nor charge twice", () => {
  it("kill -9 mid-job: once the lease has run out, a retry on another process takes over, uncharged", async () => {
    const { key, id } = await keys.create({ name: "crash", permissions: [PERMISSION], remaining: USES });
    const first = await serve();
    const { cut } = await cutMidJob(first, key, id);
    first.proc.kill("SIGKILL");
    await first.exited;
    expect(await cut).toBeInstanceOf(Error);
    await retryRuns(await serve(), key, id);
  }, 120_000);

  it("kill -9 mid-job on the default lease: a client retrying on another process gets its answer within 10 s, charged once", async () => {
    const { key, id } = await keys.create({ name: "crash-default", permissions: [PERMISSION], remaining: USES });
    const first = await serve(DEFAULT_LEASE);
    const other = await serve(DEFAULT_LEASE);
    const { cut } = await cutMidJob(first, key, id);
    first.proc.kill("SIGKILL");
    await first.exited;
    const killedAt = Date.now();
    expect(await cut).toBeInstanceOf(Error);
    provider.release();
    // The dead holder's claim is locked (409 with Retry-After) only until its lease runs out.
    const { res, statuses } = await retryAsAClientWould(other, key, killedAt, 10_000);
    expect([res.status, res.headers.get("idempotent-replayed"), statuses.filter((s) => s !== 409)]).toEqual([
      200,
      null,
      [200],
    ]);
    expect(await remainingOf(keys, id)).toBe(USES - 1);
    const replay = await post(other, key);
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(await remainingOf(keys, id)).toBe(USES - 1);
  }, 120_000);

  it("SIGTERM with the job still running at SHUTDOWN_TIMEOUT_MS: its use is given back and its key freed before exit, default lease", async () => {
    const { key, id } = await keys.create({ name: "drain", permissions: [PERMISSION], remaining: USES });
    const first = await serve({ ...DEFAULT_LEASE, SHUTDOWN_TIMEOUT_MS: "500" });
    const other = await serve(DEFAULT_LEASE);
    const { cut } = await cutMidJob(first, key, id);
    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await cut).toBeInstanceOf(Error);
    // Paid back by the time the process is gone, not when its lease would have run out.
    expect(await remainingOf(keys, id)).toBe(USES);
    // The retry on the instance still running runs the job at once (no 409 "still in progress").
    await retryRuns(other, key, id);
  }, 120_000);
});
