import { randomUUID } from "node:crypto";
import { privateDatabaseFile } from "../db/database.js";
import { openSqliteFile, type SqliteConnection, type SqliteStatement } from "../db/sqlite.js";
import { WalCheckpointer } from "../db/wal-checkpointer.js";
import { decide, type LimitDecision, type LimitRule, type RateLimiter } from "../ports/rate-limiter.js";

// RedisRateLimiter is in redis-limiter.ts, which the composition root imports only with Redis configured.

const SWEEP_EVERY_MS = 5 * 60_000;
/** How long a lease may be spent from; what is left of it then goes back to the count. */
export const LEASE_MS = 200;
/** How long past its end another process waits for a lease to come back before it counts it spent. */
const LEASE_GRACE_MS = 300;
const LEASE_MAX = 256;

/**
 * The points lent to one process at a time for one key of `rule`: a 64th of the rule, at most 256,
 * and none for rules under 128 points (the demo tier's default 60, the sign-in and contact limits
 * are decided one by one).
 */
export function leaseSize(rule: LimitRule): number {
  const size = Math.min(LEASE_MAX, Math.floor(rule.points / 64));
  return size >= 2 ? size : 0;
}

/** Points of one key claimed (committed) for this process and spent here without a commit. */
interface Lease {
  /** The window (its row's `expire`) the points were claimed in. */
  expire: number;
  /** Nothing is spent from the lease from then on. */
  until: number;
  /** Claimed and not spent yet. */
  left: number;
  /** The window's count as this process knows it, this lease's unspent points excluded. */
  used: number;
}

/** A refusal that another process's live lease may turn into an answer: decide again after `ms`. */
class Retry {
  constructor(readonly ms: number) {}
}

/** A decision or change waiting for the next commit, with whoever awaits it. */
interface Pending {
  run: (now: number) => unknown;
  /** The answer from this process's lease, if it can give one (then `run` does not run). */
  leased?: (now: number) => unknown;
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
 * -9`) keeps every commit and only an OS crash or power cut can lose the last counts. The WAL's
 * checkpoints (which fsync) run in a thread of their own (db/wal-checkpointer.ts), not inside a
 * commit on the event loop. The rows
 * and windows are rate-limiter-flexible's (`RateLimiterSQLite`'s table, fixed windows).
 *
 * Leases: for a key far from its limit (rules of 128 points or more), a decision also claims a
 * lease of `leaseSize(rule)` points, added to the count in the same commit and recorded in
 * `rate_leases`, and this process spends the next decisions of that key from it with no commit
 * for up to `LEASE_MS` (answered at the same point of the turn as committed ones: a turn's
 * answers still leave together, which saves the peers a wake-up each under load). Claimed first, spent after: the committed count is never below what was
 * spent, so a lease can never let more than `points` through, on one process or on several. What
 * is left of a lease goes back to the count when it ends, at the key's next decision that the
 * lease cannot take, and at `close()`; so a graceful restart loses nothing, and a `kill -9` counts
 * at most one unspent lease per key as spent (toward refusing, never toward allowing). A lease is
 * claimed only while the count stays at least 8 leases below the limit, and every refusal is
 * taken on the committed count after this process's own lease came back; one that would fall
 * while another process holds a live lease on the key is taken back and decided again once that
 * lease has come back (at most `LEASE_MS` + `LEASE_GRACE_MS` later). So the counts stay exact under
 * concurrent bursts, across workers too. The `remaining` of a decision taken from a lease is this
 * process's view (another worker's spends show at its next commit), and a read (0 points) counts
 * another worker's unspent lease as spent. `reset` forgets this process's lease; another worker's
 * lease stays spendable for what is left of its `LEASE_MS`.
 */
export class SqliteRateLimiter implements RateLimiter {
  private readonly db: SqliteConnection;
  private readonly checkpointer: WalCheckpointer;
  private readonly sweeper: NodeJS.Timeout;
  private readonly spend: SqliteStatement<
    [{ key: string; points: number; expire: number; now: number }],
    { points: number; expire: number }
  >;
  private readonly look: SqliteStatement<[string], { points: number; expire: number }>;
  private readonly giveBack: SqliteStatement<[{ key: string; points: number; now: number }]>;
  private readonly forget: SqliteStatement<[string]>;
  private readonly lend: SqliteStatement<[{ key: string; points: number }]>;
  private readonly claim: SqliteStatement<[{ key: string; points: number; owner: string; until: number }]>;
  private readonly giveBackLease: SqliteStatement<[{ key: string; points: number; expire: number }]>;
  private readonly dropLease: SqliteStatement<[string, string]>;
  private readonly dropLeases: SqliteStatement<[number]>;
  private readonly othersLease: SqliteStatement<[string, string, number], number | null>;
  /** This limiter's name in `rate_leases`. */
  private readonly owner = randomUUID();
  private readonly leases = new Map<string, Lease>();
  /** Keys whose lease was claimed in the batch being committed (dropped here if it rolls back). */
  private claimed: string[] = [];
  private returner: NodeJS.Timeout | undefined;
  private readonly commit: (batch: Pending[], now: number, writes: boolean) => unknown[];
  private pending: Pending[] = [];
  private scheduled = false;
  private closed = false;

  constructor(dataDir: string) {
    const file = privateDatabaseFile(dataDir, "limits.db");
    const db = openLimitsFile(file);
    this.db = db;
    // Checkpoints (two fsyncs) in a thread of their own, not inside a commit on the event loop.
    this.checkpointer = new WalCheckpointer(file, (pages) => db.pragma(`wal_autocheckpoint = ${pages}`));
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
    this.lend = db.prepare("UPDATE rate_limits SET points = points + @points WHERE key = @key");
    this.claim = db.prepare(
      `INSERT INTO rate_leases (key, owner, points, until) VALUES (@key, @owner, @points, @until)
       ON CONFLICT(key, owner) DO UPDATE SET points = excluded.points, until = excluded.until`,
    );
    // Back to the window it was claimed in only (a window that ended took its points with it).
    this.giveBackLease = db.prepare(
      "UPDATE rate_limits SET points = max(points - @points, 0) WHERE key = @key AND expire = @expire",
    );
    this.dropLease = db.prepare("DELETE FROM rate_leases WHERE key = ? AND owner = ?");
    this.dropLeases = db.prepare("DELETE FROM rate_leases WHERE until < ?");
    this.othersLease = db
      .prepare<[string, string, number], number | null>(
        "SELECT max(until) FROM rate_leases WHERE key = ? AND owner <> ? AND until > ?",
      )
      .pluck();
    const batch = db.transaction((ops: Pending[], now: number) => ops.map((op) => op.run(now)));
    // A batch that writes takes the write lock at once; reads alone share the file (a plain BEGIN).
    this.commit = (ops, now, writes) => (writes ? batch.immediate(ops, now) : batch(ops, now));
    const sweep = db.prepare("DELETE FROM rate_limits WHERE expire < ?");
    this.sweeper = setInterval(() => {
      const now = Date.now();
      sweep.run(now);
      // Leases of a process that died before giving them back: their points stay counted.
      this.dropLeases.run(now - LEASE_GRACE_MS);
    }, SWEEP_EVERY_MS).unref();
  }

  consume(rule: LimitRule, key: string, points = 1): Promise<LimitDecision> {
    const id = keyOf(rule, key);
    return this.queue(
      points > 0,
      (now) => this.fromLease(rule, id, points, now) ?? this.decide(rule, id, points, now),
      (now) => this.fromLease(rule, id, points, now),
    );
  }

  async refund(rule: LimitRule, key: string, points = 1): Promise<void> {
    const id = keyOf(rule, key);
    await this.queue(true, (now) => {
      const lease = this.leases.get(id);
      if (lease) lease.used = Math.max(0, lease.used - points);
      return this.giveBack.run({ key: id, points, now });
    });
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    const id = keyOf(rule, key);
    await this.queue(true, () => {
      this.leases.delete(id);
      this.dropLease.run(id, this.owner);
      return this.forget.run(id);
    });
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.flush();
    // What is left of every lease goes back, so a restart finds the exact counts.
    if (this.leases.size > 0) this.db.transaction(() => this.settleAll(() => true)).immediate();
    this.closed = true;
    clearInterval(this.sweeper);
    clearTimeout(this.returner);
    this.db.close();
    await this.checkpointer.close();
  }

  /** Spends from this process's lease on the key, if it has one that can take `points` now. */
  private fromLease(rule: LimitRule, id: string, points: number, now: number): LimitDecision | undefined {
    const lease = this.leases.get(id);
    if (!lease || now >= lease.until || now >= lease.expire || lease.left < points) return undefined;
    lease.left -= points;
    lease.used += points;
    return decide(rule, lease.used, lease.expire - now);
  }

  /** A decision on the committed count (in a batch), claiming a lease when the key is far from its limit. */
  private decide(rule: LimitRule, id: string, points: number, now: number): LimitDecision | Retry {
    this.settle(id);
    const expire = now + rule.durationSec * 1000;
    if (points === 0) {
      const found = this.look.get(id);
      const row = found && found.expire > now ? found : { points: 0, expire };
      return decide(rule, row.points, row.expire - now);
    }
    const row = this.spend.get({ key: id, points, expire, now });
    if (!row) throw new Error("rate_limits upsert returned no row");
    if (row.points > rule.points) {
      const until = this.othersLease.get(id, this.owner, now - LEASE_GRACE_MS);
      if (typeof until === "number") {
        // Another process may give back part of its lease: not spent now, decided again after it.
        this.giveBack.run({ key: id, points, now });
        return new Retry(Math.max(1, until + LEASE_GRACE_MS - now));
      }
    }
    const size = leaseSize(rule);
    if (size > 0 && row.points + 9 * size <= rule.points) {
      const until = now + LEASE_MS;
      this.lend.run({ key: id, points: size });
      this.claim.run({ key: id, points: size, owner: this.owner, until });
      this.leases.set(id, { expire: row.expire, until, left: size, used: row.points });
      this.claimed.push(id);
      this.returner ??= setTimeout(() => this.returnEnded(), LEASE_MS).unref();
    }
    return decide(rule, row.points, row.expire - now);
  }

  /** Gives back (in a batch) what is left of this process's lease on the key, and forgets it. */
  private settle(id: string): void {
    const lease = this.leases.get(id);
    if (!lease) return;
    this.leases.delete(id);
    if (lease.left > 0) this.giveBackLease.run({ key: id, points: lease.left, expire: lease.expire });
    this.dropLease.run(id, this.owner);
  }

  private settleAll(which: (lease: Lease) => boolean): void {
    for (const [id, lease] of [...this.leases]) if (which(lease)) this.settle(id);
  }

  /** Gives back the leases that have ended (in the next commit); runs every LEASE_MS while any is held. */
  private returnEnded(): void {
    this.returner = undefined;
    if (this.closed || this.leases.size === 0) return;
    const now = Date.now();
    const ended = (lease: Lease) => lease.until <= now;
    if ([...this.leases.values()].some(ended)) this.queue(true, () => this.settleAll(ended)).catch(() => {});
    this.returner = setTimeout(() => this.returnEnded(), LEASE_MS).unref();
  }

  /** Runs `run` in the next group commit; its result once that commit is done. */
  private queue<T>(
    writes: boolean,
    run: (now: number) => T | Retry,
    leased?: (now: number) => T | undefined,
  ): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the rate limiter is closed"));
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ run, leased, writes, resolve: resolve as (value: never) => void, reject });
    });
  }

  private enqueue(op: Pending): void {
    if (this.closed) {
      op.reject(new Error("the rate limiter is closed"));
      return;
    }
    this.pending.push(op);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.closed) return;
    const now = Date.now();
    // Answers from leases need no transaction; they leave with the turn's committed ones.
    const ops: Pending[] = [];
    for (const op of this.pending) {
      const answer = op.leased?.(now);
      if (answer === undefined) ops.push(op);
      else op.resolve(answer as never);
    }
    this.pending = [];
    if (ops.length === 0) return;
    let results: unknown[];
    const writes = ops.some((op) => op.writes);
    try {
      results = this.commit(ops, now, writes);
    } catch (err) {
      // Rolled back: nothing of the batch counted (leases claimed in it included), and every
      // caller hears so. A lease given back in it stays forgotten: its points stay counted.
      for (const id of this.claimed) this.leases.delete(id);
      this.claimed = [];
      for (const op of ops) op.reject(err);
      return;
    }
    this.claimed = [];
    if (writes) this.checkpointer.committed();
    for (const [i, op] of ops.entries()) {
      const result = results[i];
      if (result instanceof Retry) setTimeout(() => this.enqueue(op), result.ms);
      else op.resolve(result as never);
    }
  }
}

/** Opens `file` (creating it) in WAL mode with the counters' tables. */
function openLimitsFile(file: string): SqliteConnection {
  const db = openSqliteFile(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 2000");
  createTable(db);
  return db;
}

/**
 * Creates DATA_DIR/limits.db before WEB_CONCURRENCY's workers open it: two processes switching a
 * new file to WAL at once can get SQLITE_BUSY without waiting, which stopped a worker's start.
 */
export function prepareLimitsFile(dataDir: string): void {
  openLimitsFile(privateDatabaseFile(dataDir, "limits.db")).close();
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
    db.exec(`CREATE TABLE IF NOT EXISTS rate_leases (key TEXT NOT NULL, owner TEXT NOT NULL,
      points INTEGER NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (key, owner)) WITHOUT ROWID`);
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
