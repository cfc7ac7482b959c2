import { privateDatabaseFile } from "../db/database.js";
import { openSqliteFile, type SqliteConnection, type SqliteStatement } from "../db/sqlite.js";
import { decide, type LimitDecision, type LimitRule, type RateLimiter } from "../ports/rate-limiter.js";

// RedisRateLimiter is in redis-limiter.ts, which the composition root imports only with REDIS_URL.

const SWEEP_EVERY_MS = 5 * 60_000;

/** A decision or change waiting for the next commit, with whoever awaits it. */
interface Pending {
  run: (now: number) => unknown;
  /** False for a read (spending 0 points): a batch of reads only needs no write transaction. */
  writes: boolean;
  resolve: (value: never) => void;
  reject: (err: unknown) => void;
}

/**
 * Counters in `limits.db` in the data directory (without Redis). A decision is one
 * `INSERT … ON CONFLICT DO UPDATE … RETURNING` that starts or adds to the key's window and reads
 * the total back, so a count is atomic, survives a restart or a `kill -9`, and is shared by the
 * workers of `WEB_CONCURRENCY` (each opens the same file; SQLite's write lock orders them).
 *
 * Group commit: the decisions (and refunds, resets) asked for during one turn of the event loop
 * run together in one `BEGIN IMMEDIATE … COMMIT` just after it (`setImmediate`), and each caller
 * gets its answer only once that commit is done. So nothing is answered on a count that is not
 * committed, the write lock is held only while the batch runs (microseconds, not across turns),
 * and a commit — most of an upsert's cost on its own — is paid once per turn instead of once
 * per request. Spending 0 points only reads the count (the invalid-key throttle's check for a
 * key it knows): no row is written.
 *
 * The file is separate from the main database, in WAL mode with `synchronous = NORMAL`: a commit
 * is written to the WAL (the OS's page cache) but not fsynced, so a crash of the process (`kill
 * -9`) keeps every commit and only an OS crash or power cut can lose the last counts. The rows
 * and windows are rate-limiter-flexible's (`RateLimiterSQLite`'s table, fixed windows).
 */
export class SqliteRateLimiter implements RateLimiter {
  private readonly db: SqliteConnection;
  private readonly sweeper: NodeJS.Timeout;
  private readonly spend: SqliteStatement<
    [{ key: string; points: number; expire: number; now: number }],
    { points: number; expire: number }
  >;
  private readonly look: SqliteStatement<[string], { points: number; expire: number }>;
  private readonly giveBack: SqliteStatement<[{ key: string; points: number; now: number }]>;
  private readonly forget: SqliteStatement<[string]>;
  private readonly commit: (batch: Pending[], now: number, writes: boolean) => unknown[];
  private pending: Pending[] = [];
  private scheduled = false;
  private closed = false;

  constructor(dataDir: string) {
    const db = openSqliteFile(privateDatabaseFile(dataDir, "limits.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 2000");
    createTable(db);
    this.db = db;
    // A live window adds up, an expired one starts again.
    this.spend = db.prepare(
      `INSERT INTO rate_limits (key, points, expire) VALUES (@key, @points, @expire)
       ON CONFLICT(key) DO UPDATE SET
         points = CASE WHEN expire > @now THEN points + excluded.points ELSE excluded.points END,
         expire = CASE WHEN expire > @now THEN expire ELSE excluded.expire END
       RETURNING points, expire`,
    );
    this.look = db.prepare("SELECT points, expire FROM rate_limits WHERE key = ?");
    this.giveBack = db.prepare(
      "UPDATE rate_limits SET points = max(points - @points, 0) WHERE key = @key AND expire > @now",
    );
    this.forget = db.prepare("DELETE FROM rate_limits WHERE key = ?");
    const batch = db.transaction((ops: Pending[], now: number) => ops.map((op) => op.run(now)));
    // A batch that writes takes the write lock at once; reads alone share the file (a plain BEGIN).
    this.commit = (ops, now, writes) => (writes ? batch.immediate(ops, now) : batch(ops, now));
    const sweep = db.prepare("DELETE FROM rate_limits WHERE expire < ?");
    this.sweeper = setInterval(() => sweep.run(Date.now()), SWEEP_EVERY_MS).unref();
  }

  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    const id = keyOf(rule, key);
    return this.queue(points > 0, (now) => {
      const live = { points: 0, expire: now + rule.durationSec * 1000 };
      const found = points === 0 ? this.look.get(id) : undefined;
      const row =
        points === 0
          ? found && found.expire > now
            ? found
            : live
          : this.spend.get({ key: id, points, expire: live.expire, now });
      if (!row) throw new Error("rate_limits upsert returned no row");
      return decide(rule, row.points, row.expire - now);
    });
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    await this.queue(true, (now) => this.giveBack.run({ key: keyOf(rule, key), points, now }));
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    await this.queue(true, () => this.forget.run(keyOf(rule, key)));
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    clearInterval(this.sweeper);
    this.db.close();
  }

  /** Runs `run` in the next group commit; its result once that commit is done. */
  private queue<T>(writes: boolean, run: (now: number) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the rate limiter is closed"));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, writes, resolve: resolve as (value: never) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const ops = this.pending;
    if (ops.length === 0 || this.closed) return;
    this.pending = [];
    let results: unknown[];
    const writes = ops.some((op) => op.writes);
    try {
      results = this.commit(ops, Date.now(), writes);
    } catch (err) {
      // Rolled back: nothing of the batch counted, and every caller hears so.
      for (const op of ops) op.reject(err);
      return;
    }
    for (const [i, op] of ops.entries()) op.resolve(results[i] as never);
  }
}

const TABLE =
  "CREATE TABLE rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL, expire INTEGER NOT NULL) WITHOUT ROWID";

/**
 * Creates the counters' table, or moves one from before 2026-11-26 to this layout (its counts kept):
 * WITHOUT ROWID keeps each row in the key's own B-tree, so a new client grows one tree instead of
 * two (a first decision cost ~39 µs of CPU against ~31 µs, a repeat one ~26 µs either way). Under
 * the write lock, so the workers of WEB_CONCURRENCY opening the file together move it once.
 */
function createTable(db: SqliteConnection): void {
  db.transaction(() => {
    const found = db
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'rate_limits'")
      .pluck()
      .get();
    if (typeof found === "string" && /WITHOUT ROWID/i.test(found)) return;
    if (found === undefined) return void db.exec(TABLE);
    db.exec(`ALTER TABLE rate_limits RENAME TO rate_limits_rowid;
      ${TABLE};
      INSERT INTO rate_limits (key, points, expire) SELECT key, points, expire FROM rate_limits_rowid;
      DROP TABLE rate_limits_rowid;`);
  }).immediate();
}

/** rate-limiter-flexible's key layout (`prefix:key`), with the rule's name as the prefix (as on Redis). */
const keyOf = (rule: LimitRule, key: string) => `${rule.name}:${key}`;
