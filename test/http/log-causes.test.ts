import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteFile } from "../../src/db/sqlite.js";
import { describeCause } from "../../src/http/failure.js";
import { fakePostcodesIo } from "../fakes/postcodes-io.js";
import type { UpstreamFake } from "../fakes/upstream-fake.js";
import { testApp } from "../helpers/app.js";
import { DATABASE_URL } from "../helpers/env.js";
import { capturedLogger } from "../helpers/log-lines.js";

type Line = Record<string, unknown> & { msg: string; request_id?: string };

/** The app with its logger captured (pino's own JSON lines, parsed). */
async function loggedApp(env: Record<string, string>, patch: Parameters<typeof testApp>[1] = () => ({})) {
  const { logger, lines } = capturedLogger();
  const t = await testApp({ DEMO_HOURLY_LIMIT: "1000000", ...env }, (deps) => ({ logger, ...patch(deps) }));
  const call = async (path: string, init?: RequestInit) => {
    const res = await t.app.request(path, init);
    const id = res.headers.get("x-request-id") ?? "";
    const mine = () => (lines as unknown as Line[]).filter((l) => l.request_id === id);
    return { res, id, mine, line: () => mine().find((l) => l.msg === "request") };
  };
  return { t, lines, call };
}

describe("the request's log line says why it failed", () => {
  let postcodes: UpstreamFake;
  let rig: Awaited<ReturnType<typeof loggedApp>>;
  beforeAll(async () => {
    postcodes = await fakePostcodesIo();
    rig = await loggedApp({ POSTCODES_BASE_URL: postcodes.url, UPSTREAM_TIMEOUT_MS: "1500" });
  });
  afterAll(async () => {
    await rig.t.close();
    await postcodes.close();
  });

  it("a 502 from an upstream's status: error.code and the upstream, its failure and status", async () => {
    postcodes.fault = "500";
    const { res, line } = await rig.call("/v1/postcode?postcode=SW1A1AA");
    expect(res.status).toBe(502);
    expect(line()).toMatchObject({
      status: 502,
      error: {
        code: "upstream_error",
        cause: { kind: "upstream", upstream: expect.stringMatching(/postcode/i), failure: "status", status: 500 },
      },
    });
  });

  it("a 502 from an upstream that never answers: the timeout", async () => {
    postcodes.fault = "hang";
    const { res, line } = await rig.call("/v1/postcode?postcode=SW1A2AA");
    expect(res.status).toBe(502);
    expect(line()).toMatchObject({
      error: { code: "upstream_error", cause: { kind: "upstream", failure: "timeout" } },
    });
    postcodes.fault = null;
  });

  it("a 4xx carries its code and no cause; a success carries no error", async () => {
    const bad = await rig.call("/v1/moon?date=not-a-date");
    expect(bad.res.status).toBe(400);
    expect(bad.line()?.error).toEqual({ code: "invalid_body" });
    const ok = await rig.call("/v1/moon?date=2025-06-01");
    expect(ok.res.status).toBe(200);
    expect(ok.line()).not.toHaveProperty("error");
  });
});

describe("causes of a 503 and a 500, and the request-scoped logger", () => {
  it("a lost database (pg's pool timeout) under key verification: 503 unavailable, cause pool_timeout", async () => {
    const rig = await loggedApp({}, (deps) => ({
      keys: {
        ...deps.keys,
        verify: async () => {
          throw new Error("timeout exceeded when trying to connect");
        },
      },
    }));
    try {
      const { res, line } = await rig.call("/v1/vibe/classify", {
        method: "POST",
        headers: { authorization: "Bearer sk_anything", "content-type": "application/json" },
        body: JSON.stringify({ texts: ["fine"] }),
      });
      expect(res.status).toBe(503);
      expect(line()).toMatchObject({ error: { code: "unavailable", cause: { kind: "pool_timeout" } } });
    } finally {
      await rig.t.close();
    }
  });

  it("an unexpected throw: 500 internal; the handler's own line and the request line share the request id", async () => {
    const rig = await loggedApp({}, (deps) => ({
      keys: {
        ...deps.keys,
        verify: async () => {
          throw new TypeError("boom");
        },
      },
    }));
    try {
      const { res, mine, line } = await rig.call("/v1/vibe/classify", {
        method: "POST",
        headers: { authorization: "Bearer sk_anything", "content-type": "application/json" },
        body: JSON.stringify({ texts: ["fine"] }),
      });
      expect(res.status).toBe(500);
      expect(line()).toMatchObject({
        error: { code: "internal", cause: { kind: "error", message: "TypeError: boom" } },
      });
      expect(mine().map((l) => l.msg)).toEqual(["unhandled error", "request"]);
    } finally {
      await rig.t.close();
    }
  });
});

describe("describeCause: SQL error classes", () => {
  it("SQLite: the SQLITE_* code", () => {
    const db = openSqliteFile(":memory:");
    try {
      expect(() => db.prepare("select * from missing").all()).toThrow();
      let caught: unknown;
      try {
        db.prepare("select * from missing").all();
      } catch (err) {
        caught = err;
      }
      expect(describeCause(new Error("wrapped", { cause: caught }))).toMatchObject({
        kind: "sql",
        code: "SQLITE_ERROR",
      });
    } finally {
      db.close();
    }
  });

  it.skipIf(!DATABASE_URL)("PostgreSQL (skipped without DATABASE_URL): SQLSTATE and its class", async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const err = await client.query("select * from missing_table_for_log_causes").catch((e: unknown) => e);
      expect(describeCause(err)).toMatchObject({ kind: "sql", code: "42P01", sql_class: "42" });
    } finally {
      await client.end();
    }
  });

  it.skipIf(!DATABASE_URL)("PostgreSQL (skipped without DATABASE_URL): a pool's wait that timed out", async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, connectionTimeoutMillis: 100 });
    const held = await pool.connect();
    try {
      const err = await pool.connect().catch((e: unknown) => e);
      expect(describeCause(err)).toMatchObject({ kind: "pool_timeout" });
    } finally {
      held.release();
      await pool.end();
    }
  });
});
