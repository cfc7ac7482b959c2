import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers/cli.js";
import { tempDir } from "./helpers/env.js";
import { CLOSE, spawnCli, spawnServer } from "./helpers/process.js";

// Each test starts a process: on a loaded 2-core host that takes longer than the default 20 s.
describe("the almanac process", { timeout: 60_000 }, () => {
  it("serves with embedded defaults, and on SIGTERM drains and exits 0", async () => {
    const server = await spawnServer({ DATA_DIR: tempDir() });
    const res = await fetch(`${server.url}/readyz`, CLOSE);
    expect(await res.json()).toEqual({ status: "ready", checks: { database: "ok" } });
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  it("on the embedded defaults loads no optional adapter's package (Redis, PostgreSQL, mail, payments, sign-in)", async () => {
    // What a start loads is most of its time to the first 200 (docs/benchmarks.md): the adapters
    // that REDIS_URL, DATABASE_URL, MAIL_URL, STRIPE_* and the account pages select load on demand.
    const record = join(tempDir(), "packages.txt");
    const preload = fileURLToPath(new URL("./fixtures/record-packages.mjs", import.meta.url));
    const server = await spawnServer({
      DATA_DIR: tempDir(),
      NODE_OPTIONS: `--import ${preload}`,
      RECORD_PACKAGES: record,
    });
    expect((await fetch(`${server.url}/v1/moon?date=2025-06-01`, CLOSE)).status).toBe(200);
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
    const loaded = new Set(
      [...readFileSync(record, "utf8").matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1]),
    );
    // The recorder sees both kinds of package: CommonJS (require's cache) and ES modules (the hook).
    expect(loaded).toContain("pino");
    expect(loaded).toContain("lru-cache");
    for (const optional of [
      "ioredis",
      "rate-limiter-flexible",
      "pg",
      "nodemailer",
      "stripe",
      "better-auth",
      "csv-parse",
    ]) {
      expect(loaded, optional).not.toContain(optional);
    }
  });

  it("still exits 0 on SIGTERM when nobody reads its log any more (EPIPE on stdout)", async () => {
    const server = await spawnServer({ DATA_DIR: tempDir(), LOG_LEVEL: "info" });
    server.proc.stdout?.destroy(); // the reader is gone: the next log lines meet EPIPE
    for (let i = 0; i < 3; i++) await fetch(`${server.url}/healthz`, CLOSE);
    server.proc.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  it("refuses to start on a bad value, naming the variable", async () => {
    const { code, stderr } = await runCli(["serve"], { DATA_DIR: tempDir(), PORT: "http", TRUST_PROXY: "many" });
    expect(code).toBe(1);
    expect(stderr).toContain("PORT");
    expect(stderr).toContain("TRUST_PROXY");
  });

  // The one spawned CLI of the suite (a smoke test of bin/almanac.js); the rest run it in-process.
  // A process start through tsx takes ~5 s of CPU: on a loaded 2-core host, more than the default 20 s.
  it("`almanac migrate` applies migrations and reports them", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const first = await spawnCli(["migrate"], { DATA_DIR: dir });
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { database: string; applied: string[] };
    expect(report.database).toBe("sqlite");
    expect(report.applied).toContain("001_foundation");
    const again = await runCli(["migrate"], { DATA_DIR: dir });
    expect(JSON.parse(again.stdout).applied).toEqual([]);
  });
});
