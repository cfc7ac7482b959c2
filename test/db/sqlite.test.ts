import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { sqliteDriverFor } from "../../src/db/sqlite.js";

describe("the SQLite driver for the running Node", () => {
  it("is better-sqlite3 13 (Node-API 10: Node 22.14+, 24) or 12 (Node 20, Node-API 9)", () => {
    expect(sqliteDriverFor(9)).toBe("better-sqlite3");
    expect(sqliteDriverFor(10)).toBe("better-sqlite3-napi");
    expect(sqliteDriverFor(11)).toBe("better-sqlite3-napi");
  });

  it("survives prepared statements freed by idle garbage collection (12 aborted on Node 24)", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "test/db/sqlite-churn.fixture.ts"],
      { timeout: 60_000 },
    );
    const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(result.node).toBe(process.version);
    expect(result.driver).toMatch(
      Number(process.versions.napi) >= 10 ? /^better-sqlite3 13\./ : /^better-sqlite3 12\./,
    );
  });
});
