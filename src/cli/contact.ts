import type { Command } from "commander";
import pino from "pino";
import { openMigrated } from "../admin.js";
import type { Config } from "../config.js";
import { deliverContact } from "../features/contact/deliver.js";
import { ContactOutbox, outboxOptions, pendingGraceMs } from "../features/contact/outbox.js";
import { type ContactRow, type ContactStatus, ContactStore } from "../features/contact/store.js";
import type { MailLane } from "../ports/mail-lane.js";
import { CliError, type CliIo, wholeNumber } from "./io.js";

const STATUSES: ContactStatus[] = ["pending", "sent", "failed"];

function fail(message: string): never {
  throw new CliError(message);
}

/** The SMTP lane to `url`, logging nothing (the commands print their own lines); nodemailer loads only here. */
async function mailLane(config: Config, url: string): Promise<MailLane> {
  const { createSmtpMailLane } = await import("../adapters/smtp-mail.js");
  return createSmtpMailLane({
    url,
    from: config.MAIL_FROM,
    timeoutMs: config.MAIL_TIMEOUT_MS,
    logger: pino({ level: "silent" }),
  });
}

async function withStore<T>(config: Config, run: (store: ContactStore) => Promise<T>): Promise<T> {
  const logger = pino({ level: "warn" }, pino.destination(2));
  const { database } = await openMigrated(config, logger);
  try {
    return await run(new ContactStore(database.db));
  } finally {
    await database.close();
  }
}

const summary = (r: ContactRow) => ({
  id: r.id,
  status: r.status,
  attempts: r.attempts,
  last_error: r.last_error,
  name: r.name,
  email: r.email,
  subject: r.subject,
  created_at: r.created_at,
  sent_at: r.sent_at,
});

/** `almanac contact list|retry`: the operator's view of stored contact messages. */
export function registerContactCommands(program: Command, io: CliIo, loadConfig: () => Config): void {
  const contact = program.command("contact").description("contact desk messages stored by POST /v1/mail/contact");

  contact
    .command("list")
    .description("list stored messages (oldest first) as JSON")
    .option("--status <status>", `only messages in this status (${STATUSES.join(", ")})`)
    .option("--limit <n>", "at most this many (1 to 100000)", wholeNumber("--limit", 1, 100_000), 100)
    .action(async (opts: { status?: string; limit: number }) => {
      if (opts.status !== undefined && !STATUSES.includes(opts.status as ContactStatus)) {
        fail(`--status must be one of ${STATUSES.join(", ")}`);
      }
      const limit = opts.limit;
      const rows = await withStore(loadConfig(), (s) => s.list(opts.status as ContactStatus | undefined, limit));
      io.stdout(`${JSON.stringify(rows.map(summary), null, 2)}\n`);
    });

  contact
    .command("retry")
    .description("send a stored message again (ID), or every failed one (--all-failed); prints one JSON line each")
    .argument("[id]", "message id (con_…)")
    .option("--all-failed", "retry every message whose status is failed")
    .action(async (id: string | undefined, opts: { allFailed?: boolean }) => {
      if (Boolean(id) === Boolean(opts.allFailed)) fail("give either a message ID or --all-failed");
      const config = loadConfig();
      if (!config.MAIL_URL) fail("MAIL_URL is not set: there is no mail lane to send with");
      const lane = await mailLane(config, config.MAIL_URL);
      let failures = 0;
      try {
        await withStore(config, async (store) => {
          let rows: ContactRow[];
          if (id) {
            const row = await store.get(id);
            if (!row) fail(`no contact message ${id}`);
            if (row.status === "sent") fail(`contact message ${id} was already sent`);
            // As the outbox and an Idempotency-Key retry: a pending row is only taken once abandoned.
            const graceMs = pendingGraceMs(config);
            if (row.status === "pending" && Date.now() - Date.parse(row.updated_at) < graceMs) {
              fail(
                `contact message ${id} is being sent (pending since ${row.updated_at}); the outbox resends it if that send was cut off (pending for ${graceMs} ms)`,
              );
            }
            rows = [row];
          } else {
            rows = await store.list("failed", 10_000);
          }
          for (const row of rows) {
            const claimed = await store.claimRetry(row);
            if (!claimed) {
              failures++;
              io.stdout(`${JSON.stringify({ id: row.id, status: "skipped", reason: "changed meanwhile" })}\n`);
              continue;
            }
            const result = await deliverContact(store, lane, config.CONTACT_TO, claimed);
            if (!result.ok) failures++;
            const line = result.ok
              ? { id: row.id, status: "sent", attempts: claimed.attempts }
              : { id: row.id, status: "failed", attempts: claimed.attempts, reason: result.reason };
            io.stdout(`${JSON.stringify(line)}\n`);
          }
        });
      } finally {
        await lane.close();
      }
      if (failures > 0) io.exitCode = 1;
    });

  contact
    .command("outbox")
    .description("the outbox's backlog as JSON: unsent messages, how many are due now; --run sends what is due")
    .option("--run", "run one outbox pass now (as the server does every CONTACT_OUTBOX_INTERVAL_MS)")
    .action(async (opts: { run?: boolean }) => {
      const config = loadConfig();
      if (opts.run && !config.MAIL_URL) fail("MAIL_URL is not set: there is no mail lane to send with");
      const lane = opts.run && config.MAIL_URL ? await mailLane(config, config.MAIL_URL) : undefined;
      try {
        await withStore(config, async (store) => {
          const outbox = new ContactOutbox(
            store,
            () => lane,
            config.CONTACT_TO,
            outboxOptions(config),
            { sent: () => {}, failed: () => {}, backlog: () => {} },
            pino({ level: "silent" }),
          );
          const unsent = await store.unsent(config.CONTACT_MAX_ATTEMPTS, 100_000);
          const exhausted = (await store.list("failed", 100_000)).filter(
            (r) => r.attempts >= config.CONTACT_MAX_ATTEMPTS,
          ).length;
          const stats = {
            pending: unsent.filter((r) => r.status === "pending").length,
            failed: unsent.filter((r) => r.status === "failed").length,
            due_now: unsent.filter((r) => outbox.isDue(r)).length,
            exhausted,
          };
          const run = opts.run ? await outbox.runOnce(100_000) : undefined;
          io.stdout(`${JSON.stringify(run ? { ...stats, run } : stats)}\n`);
          if (run && run.failed > 0) io.exitCode = 1;
        });
      } finally {
        await lane?.close();
      }
    });
}
