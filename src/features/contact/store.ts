import { randomBytes } from "node:crypto";
import type { Kysely, Selectable, Updateable } from "kysely";
import { renewIn } from "../../db/idempotency.js";
import type { DB } from "../../db/schema.js";
import type { HeldClaim } from "../../ports/idempotency.js";

export type ContactRow = Selectable<DB["contact_messages"]>;
export type ContactStatus = "pending" | "sent" | "failed";

/** Whether a stored row holds exactly this message (what an Idempotency-Key retry must repeat). */
export const sameMessage = (row: ContactRow, input: NewContact): boolean =>
  row.name === input.name &&
  row.email === input.email &&
  row.subject === (input.subject ?? null) &&
  row.message === input.message;

export interface NewContact {
  name: string;
  email: string;
  subject?: string;
  message: string;
  clientIp?: string;
  /** What the client is counted by (http/client-ip.ts); its Idempotency-Key is scoped to it. */
  clientKey?: string;
  idempotencyKey?: string;
}

/** Who sent a message, as an Idempotency-Key lookup tells clients apart. */
export interface ContactClient {
  /** What the client is counted by (the IPv4 address, or the IPv6 network). */
  key: string;
  /** The client of a row stored before client_key existed, from its address. */
  keyOf(clientIp: string): string;
}

/** The Idempotency-Key claim a message is stored under, as its holder names it, and its lease. */
export interface LeasedClaim extends HeldClaim {
  leaseMs: number;
}

const newId = () => `con_${randomBytes(10).toString("hex")}`;

/**
 * Contact messages in the project's database. A message is written (`pending`, attempt 1)
 * before it is sent and marked `sent` or `failed` after, so nothing accepted is lost.
 */
export class ContactStore {
  constructor(
    private readonly db: Kysely<DB>,
    /** The store's clock (its rows' times, and how long a lost record is retried: deliver.ts). */
    readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Stores a new message (`pending`). Under `claim`, only while the claim is still its holder's:
   * in one transaction with the claim's renewal, so a request that took the claim over (this one
   * outlived its lease) never finds no message and stores one too; undefined when it was taken.
   */
  async create(input: NewContact): Promise<ContactRow>;
  async create(input: NewContact, claim: LeasedClaim | undefined): Promise<ContactRow | undefined>;
  async create(input: NewContact, claim?: LeasedClaim): Promise<ContactRow | undefined> {
    const now = this.now();
    const at = now.toISOString();
    const row: ContactRow = {
      id: newId(),
      name: input.name,
      email: input.email,
      subject: input.subject ?? null,
      message: input.message,
      client_ip: input.clientIp ?? null,
      client_key: input.clientKey ?? null,
      idempotency_key: input.idempotencyKey ?? null,
      status: "pending",
      attempts: 1,
      last_error: null,
      message_id: null,
      created_at: at,
      updated_at: at,
      sent_at: null,
    };
    if (!claim) {
      await this.db.insertInto("contact_messages").values(row).execute();
      return row;
    }
    const leaseUntil = new Date(now.getTime() + claim.leaseMs).toISOString();
    return this.db.transaction().execute(async (tx) => {
      const held = await renewIn(tx, claim, claim.owner, leaseUntil).executeTakeFirst();
      if (Number(held.numUpdatedRows) === 0) return undefined;
      await tx.insertInto("contact_messages").values(row).execute();
      return row;
    });
  }

  async get(id: string): Promise<ContactRow | undefined> {
    return this.db.selectFrom("contact_messages").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * The newest message `client` stored under this Idempotency-Key since `sinceIso`, whatever its
   * status. Another client's message under the same key is not its business. A row stored before
   * client_key existed is the client's when its address counts as the client.
   */
  async byIdempotencyKey(key: string, client: ContactClient, sinceIso: string): Promise<ContactRow | undefined> {
    const rows = await this.db
      .selectFrom("contact_messages")
      .selectAll()
      .where("idempotency_key", "=", key)
      .where("created_at", ">=", sinceIso)
      .where((eb) => eb.or([eb("client_key", "=", client.key), eb("client_key", "is", null)]))
      .orderBy("created_at", "desc")
      .execute();
    return rows.find((r) =>
      r.client_key === null ? r.client_ip !== null && client.keyOf(r.client_ip) === client.key : true,
    );
  }

  /** Messages not sent yet (pending or failed) with attempts left, oldest change first. */
  async unsent(maxAttempts: number, limit: number): Promise<ContactRow[]> {
    return this.db
      .selectFrom("contact_messages")
      .selectAll()
      .where("status", "in", ["pending", "failed"])
      .where("attempts", "<", maxAttempts)
      .orderBy("updated_at", "asc")
      .limit(limit)
      .execute();
  }

  async list(status?: ContactStatus, limit = 100): Promise<ContactRow[]> {
    let q = this.db.selectFrom("contact_messages").selectAll().orderBy("created_at", "asc").orderBy("id").limit(limit);
    if (status) q = q.where("status", "=", status);
    return q.execute();
  }

  /**
   * Claims a row for another send attempt (attempts + 1, back to `pending`) only if it is still
   * as `seen`: the server and the CLI never send the same row twice at once.
   */
  async claimRetry(seen: ContactRow): Promise<ContactRow | undefined> {
    const at = this.now().toISOString();
    const res = await this.db
      .updateTable("contact_messages")
      .set({ status: "pending", attempts: seen.attempts + 1, updated_at: at })
      .where("id", "=", seen.id)
      .where("status", "=", seen.status)
      .where("attempts", "=", seen.attempts)
      .where("status", "!=", "sent")
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return { ...seen, status: "pending", attempts: seen.attempts + 1, updated_at: at };
  }

  /**
   * Records the outcome of the send of `claimed` (as stored or claimed), only while the row is
   * still that attempt: a send that outlived its grace (a stalled process) never overwrites what
   * a later claim did since, e.g. mark failed a message the outbox has sent (which it would then
   * send a third time). False when the row had moved on.
   */
  async markSent(claimed: ContactRow, messageId: string): Promise<boolean> {
    const at = this.now().toISOString();
    return this.settle(claimed, {
      status: "sent",
      message_id: messageId,
      last_error: null,
      sent_at: at,
      updated_at: at,
    });
  }

  async markFailed(claimed: ContactRow, reason: string): Promise<boolean> {
    return this.settle(claimed, { status: "failed", last_error: reason, updated_at: this.now().toISOString() });
  }

  private async settle(claimed: ContactRow, outcome: Updateable<DB["contact_messages"]>): Promise<boolean> {
    const res = await this.db
      .updateTable("contact_messages")
      .set(outcome)
      .where("id", "=", claimed.id)
      .where("status", "=", "pending")
      .where("attempts", "=", claimed.attempts)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}
