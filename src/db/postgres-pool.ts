import { createRequire } from "node:module";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";
import { READ_ONLY_SERVER } from "./connection-failure.js";

/**
 * pg is loaded when a pool is opened, not when this module is: a server without DATABASE_URL
 * (which still imports this module through db/database.ts) never loads it. Node caches it.
 */
const loadPg = (): typeof pg => createRequire(import.meta.url)("pg");

export interface PostgresPoolOptions {
  url: string;
  /** Connections at most (DATABASE_POOL_SIZE). */
  size: number;
  /** The longest a call waits for a connection while the database keeps answering (DATABASE_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs: number;
  /** How long the database may stay silent before a call fails (DATABASE_TIMEOUT_MS); 0: unbounded. */
  silenceMs: number;
}

/**
 * The PostgreSQL pool, and the same pool as Kysely sees it on the request path. A database that
 * answers slowly because it is busy and one that does not answer at all (frozen, partitioned)
 * both leave callers waiting; they are told apart by progress:
 *
 * - a query gives up after `silenceMs` without an answer (its connection is then dropped, since
 *   the unanswered query still occupies it);
 * - a call waiting for a connection (a free one, or a new one being opened) keeps waiting, up to
 *   `acquireTimeoutMs`, as long as some query or connection completes at least every
 *   `silenceMs`; when none has for that long, the database is not answering and the call fails.
 *
 * So a burst much larger than the pool queues while the database is healthy, and a frozen
 * database turns into errors (503) after about `silenceMs`. Silence is measured on a clock that
 * stops while this process's event loop is blocked, so a busy process is never taken for a
 * silent database. `unbounded` is the same pool without these bounds, for migrations (a lock
 * wait or a long DDL statement there is expected).
 */
export function openPostgresPool(opts: PostgresPoolOptions): {
  raw: pg.Pool;
  bounded: PostgresPool;
  unbounded: PostgresPool;
} {
  const { silenceMs } = opts;
  const { Pool, DatabaseError } = loadPg();
  const raw = new Pool({
    connectionString: opts.url,
    max: opts.size,
    // Bounds the wait in the pool's queue and each connection attempt; silence is caught sooner.
    connectionTimeoutMillis: opts.acquireTimeoutMs,
    idleTimeoutMillis: 30_000,
  });
  const unbounded: PostgresPool = { connect: () => raw.connect(), end: () => raw.end() };
  if (silenceMs <= 0) return { raw, bounded: unbounded, unbounded };

  const clock = new ResponsiveClock();
  let lastProgress = clock.now();
  // Set when a call has given up on silence, cleared by the next answer: until then every call
  // gives up at its first look (a tenth of silenceMs), so a request that needs the database more
  // than once, or one that comes later, does not wait out the silence again.
  let silent = false;
  const progress = () => {
    lastProgress = clock.now();
    silent = false;
  };
  const gaveUp = () => {
    silent = true;
  };
  raw.on("connect", progress);

  /** A checked-out connection, or an error once the database has been silent for silenceMs. */
  const acquire = () => {
    const started = clock.now();
    return settleOrSilence(raw.connect(), () => silent || clock.now() - Math.max(started, lastProgress) >= silenceMs, {
      message: `PostgreSQL has not answered for ${silenceMs} ms`,
      everyMs: silenceMs / 10,
      late: (client) => client.release(),
      gaveUp,
    });
  };

  const isSilent = () => silent;
  const bounded: PostgresPool = {
    connect: async () =>
      boundedClient(await acquire(), { silenceMs, clock, progress, gaveUp, isSilent }, DatabaseError),
    end: async () => {
      clock.stop();
      await raw.end();
    },
  };
  return { raw, bounded, unbounded };
}

interface Bounds {
  silenceMs: number;
  clock: ResponsiveClock;
  progress: () => void;
  /** A call gave up on silence; `isSilent` says so until the next answer. */
  gaveUp: () => void;
  isSilent: () => boolean;
}

/**
 * `client` whose queries fail after `silenceMs` without an answer (the connection is then
 * dropped). Statements are sent unnamed: a named (prepared) statement lives in one server
 * session, and a pooler in transaction mode (PgBouncer's `pool_mode = transaction`) hands each
 * transaction whichever server connection is free.
 */
function boundedClient(
  client: pg.PoolClient,
  { silenceMs, clock, progress, gaveUp, isSilent }: Bounds,
  DatabaseError: typeof pg.DatabaseError,
): PostgresPoolClient {
  let broken = false;
  const query = async (text: string, values: ReadonlyArray<unknown>) => {
    const sent = clock.now();
    try {
      const result = await settleOrSilence(
        client.query(text, values as unknown[]),
        () => isSilent() || clock.now() - sent >= silenceMs,
        { message: `PostgreSQL did not answer a query within ${silenceMs} ms`, everyMs: silenceMs / 10, gaveUp },
      );
      progress();
      return result;
    } catch (err) {
      // An error from the server (it has a SQLSTATE) is an answer; silence or a drop is not. A
      // write refused as read-only means this connection reached a standby (a proxy that counted
      // it up, or a primary since demoted): dropped, so the next connection finds the primary.
      if (err instanceof DatabaseError) progress();
      if (!(err instanceof DatabaseError) || err.code === READ_ONLY_SERVER) broken = true;
      throw err;
    }
  };
  return {
    query: ((textOrCursor: string | pg.Submittable, values?: ReadonlyArray<unknown>) =>
      typeof textOrCursor === "string" ? query(textOrCursor, values ?? []) : client.query(textOrCursor)) as never,
    release: () => client.release(broken || undefined),
  };
}

/**
 * `work`, or an ETIMEDOUT error (which isConnectionFailure counts as an outage) as soon as
 * `silent()` holds; checked every `everyMs`, after pending I/O has run (setImmediate). What
 * `work` yields after that goes to `late`.
 */
function settleOrSilence<T>(
  work: Promise<T>,
  silent: () => boolean,
  opts: { message: string; everyMs: number; late?: (value: T) => void; gaveUp?: () => void },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const watch = setInterval(
      () =>
        setImmediate(() => {
          if (settled || !silent()) return;
          settled = true;
          clearInterval(watch);
          opts.gaveUp?.();
          reject(Object.assign(new Error(opts.message), { code: "ETIMEDOUT" }));
        }),
      Math.max(10, Math.floor(opts.everyMs)),
    );
    work.then(
      (value) => {
        if (settled) return opts.late?.(value);
        settled = true;
        clearInterval(watch);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        reject(err);
      },
    );
  });
}

const TICK_MS = 20;
/**
 * How late a tick may come before the event loop counts as blocked. On a loaded host timers run
 * late on every tick, and the process is descheduled for tens of milliseconds at a time; counted
 * as blocked, that stretched 1.5 s of silence to 2 s and more (answers that came meanwhile are
 * read before silence is declared anyway: settleOrSilence looks after the poll phase).
 */
const LATE_MS = 250;

/** Milliseconds that advance only while the event loop runs: time it spent blocked is left out. */
class ResponsiveClock {
  private blocked = 0;
  private last = performance.now();
  private readonly ticker = setInterval(() => {
    const now = performance.now();
    this.blocked += Math.max(0, now - this.last - TICK_MS - LATE_MS);
    this.last = now;
  }, TICK_MS).unref();

  now(): number {
    return performance.now() - this.blocked;
  }

  stop(): void {
    clearInterval(this.ticker);
  }
}
