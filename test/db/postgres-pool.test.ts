import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConnectionFailure } from "../../src/db/connection-failure.js";
import { openPostgresPool } from "../../src/db/postgres-pool.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";

/** The request-path pool over sessions that refuse writes, as a standby does. */
describe.skipIf(!DATABASE_URL)(`PostgreSQL pool on a read-only server ${skipReason({ postgres: true }) ?? ""}`, () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let pool: ReturnType<typeof openPostgresPool>;

  beforeAll(async () => {
    fresh = await freshPostgresUrl();
    const url = new URL(fresh.url);
    url.searchParams.set("options", `${url.searchParams.get("options")} -c default_transaction_read_only=on`);
    pool = openPostgresPool({ url: url.toString(), size: 2, acquireTimeoutMs: 5_000, silenceMs: 1_000 });
  });
  afterAll(async () => {
    await pool?.bounded.end();
    await fresh?.drop();
  });

  /** What the server answers `text` with, on a connection checked out and released again. */
  const refusal = async (text: string): Promise<{ code?: string }> => {
    const client = await pool.bounded.connect();
    const err = await client.query(text, []).then(
      () => ({}),
      (e: { code?: string }) => e,
    );
    client.release();
    return err;
  };

  it("a write refused as read-only is an outage (503), and its connection is dropped", async () => {
    const err = await refusal("create table refused (id int)");
    expect(err.code).toBe("25006");
    expect(isConnectionFailure(err)).toBe(true);
    expect(pool.raw.totalCount).toBe(0);
  });

  it("any other refusal from the server is an answer: the connection stays", async () => {
    const err = await refusal("select nope from nowhere");
    expect(err.code).toBe("42P01");
    expect(isConnectionFailure(err)).toBe(false);
    expect(pool.raw.totalCount).toBe(1);
  });
});
