import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import { Periodic } from "../../lib/periodic.js";
import type { MailLane } from "../../ports/mail-lane.js";
import { deliverContact } from "./deliver.js";
import { type ContactRow, ContactStore } from "./store.js";

export interface OutboxOptions {
  /** How often the worker looks (CONTACT_OUTBOX_INTERVAL_MS). */
  intervalMs: number;
  /** A `pending` row older than this was left by a crash (CONTACT_PENDING_GRACE_MS). */
  pendingGraceMs: number;
  /** Wait before the first retry of a failed send, doubled per attempt (CONTACT_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** Attempts after which a failed message is left to the operator (CONTACT_MAX_ATTEMPTS). */
  maxAttempts: number;
}

interface Counter {
  inc(): void;
}

/**
 * How old a `pending` row must be to count as left by a crash: CONTACT_PENDING_GRACE_MS, but never
 * less than twice MAIL_TIMEOUT_MS, the longest a request's own send (bounded by it) keeps the row
 * pending; a shorter grace would resend a mail still being sent.
 */
export const pendingGraceMs = (config: Config): number =>
  Math.max(config.CONTACT_PENDING_GRACE_MS, 2 * config.MAIL_TIMEOUT_MS);

/** The outbox's settings as configured (CONTACT_OUTBOX_INTERVAL_MS, CONTACT_PENDING_GRACE_MS, …). */
export function outboxOptions(config: Config): OutboxOptions {
  return {
    intervalMs: config.CONTACT_OUTBOX_INTERVAL_MS,
    pendingGraceMs: pendingGraceMs(config),
    retryBaseMs: config.CONTACT_RETRY_BASE_MS,
    maxAttempts: config.CONTACT_MAX_ATTEMPTS,
  };
}

export interface OutboxCounters {
  sent(): void;
  failed(): void;
  backlog(n: number): void;
}

export interface OutboxRun {
  /** Rows looked at (pending or failed with attempts left). */
  due: number;
  sent: number;
  failed: number;
  /** Rows another instance (or the CLI) claimed first. */
  skipped: number;
}

/**
 * The contact outbox: nothing accepted is stranded. A message is stored `pending` before it is
 * sent; if the process dies mid-send it stays `pending`, and a lane that refuses leaves it
 * `failed`. This worker resends `pending` rows older than the grace period and retries `failed`
 * ones with exponential backoff (base × 2^(attempts−1)) up to `maxAttempts`. Every send is
 * claimed first with a compare-and-set on (status, attempts), so several instances, or the CLI,
 * never send one row twice at once.
 */
export class ContactOutbox {
  private readonly periodic: Periodic;

  constructor(
    private readonly store: ContactStore,
    private readonly lane: () => MailLane | undefined,
    private readonly deskInbox: string,
    private readonly opts: OutboxOptions,
    private readonly counters: OutboxCounters,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.periodic = new Periodic("contact outbox pass", () => this.runOnce(), logger);
  }

  /** Whether `row` is due now: a stranded pending row, or a failed one whose backoff has passed. */
  isDue(row: ContactRow): boolean {
    if (row.status === "sent" || row.attempts >= this.opts.maxAttempts) return false;
    const age = this.now().getTime() - Date.parse(row.updated_at);
    if (row.status === "pending") return age >= this.opts.pendingGraceMs;
    return age >= this.opts.retryBaseMs * 2 ** (row.attempts - 1);
  }

  /** One pass: send what is due, oldest first. */
  async runOnce(limit = 50): Promise<OutboxRun> {
    const run: OutboxRun = { due: 0, sent: 0, failed: 0, skipped: 0 };
    const lane = this.lane();
    const candidates = await this.store.unsent(this.opts.maxAttempts, 1000);
    this.counters.backlog(candidates.length);
    if (!lane) return run;
    for (const row of candidates.filter((r) => this.isDue(r)).slice(0, limit)) {
      run.due++;
      const claimed = await this.store.claimRetry(row);
      if (!claimed) {
        run.skipped++;
        continue;
      }
      const result = await deliverContact(this.store, lane, this.deskInbox, claimed);
      if (result.ok) {
        run.sent++;
        this.counters.sent();
      } else {
        run.failed++;
        this.counters.failed();
        this.logger.warn({ id: row.id, attempts: claimed.attempts, reason: result.reason }, "contact resend failed");
      }
    }
    if (run.due > 0) this.logger.info(run, "contact outbox pass");
    return run;
  }

  start(): void {
    this.periodic.start(this.opts.intervalMs);
  }

  /** Stops the timer and waits for a pass in flight. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }
}

/** The outbox for a built app's dependencies (main starts it; tests drive `runOnce`). */
export function createContactOutbox(deps: {
  config: Config;
  database: Database;
  mail?: MailLane;
  metrics: { contactOutbox: { sentTotal: Counter; failedTotal: Counter; pending: { set(n: number): void } } };
  logger: Logger;
  now: () => Date;
}): ContactOutbox {
  const m = deps.metrics.contactOutbox;
  return new ContactOutbox(
    new ContactStore(deps.database.db, deps.now),
    () => deps.mail,
    deps.config.CONTACT_TO,
    outboxOptions(deps.config),
    { sent: () => m.sentTotal.inc(), failed: () => m.failedTotal.inc(), backlog: (n) => m.pending.set(n) },
    deps.logger,
    deps.now,
  );
}
