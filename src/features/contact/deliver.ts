import type { MailLane, OutgoingMail, SendResult } from "../../ports/mail-lane.js";
import { settle } from "../shared/idempotency.js";
import type { ContactRow, ContactStore } from "./store.js";

/**
 * The mail the desk receives. From is the lane's fixed MAIL_FROM and To the fixed desk inbox;
 * the sender appears only as the Reply-To mailbox (an address object, encoded by nodemailer)
 * and in the body.
 */
export function composeContactMail(row: ContactRow, deskInbox: string): OutgoingMail {
  const subject = row.subject ?? `Message from ${row.name}`;
  const text = [
    `Name: ${row.name}`,
    `E-mail: ${row.email}`,
    `Message id: ${row.id}`,
    `Received: ${row.created_at}`,
    "",
    row.message,
  ].join("\n");
  return {
    to: deskInbox,
    subject: `[Contact] ${subject}`,
    text,
    replyTo: { name: row.name, address: row.email },
    // One Message-ID per stored message: a resend (outbox, retry) after a lost reply is recognisably the same mail.
    uniqueId: row.id,
  };
}

/**
 * Sends a stored (already claimed) message and records the outcome on its row. A sent mail's
 * record is retried until the database takes it (`settle`): left `pending`, the message would
 * be sent again by a retry or the outbox once its grace had passed.
 */
export async function deliverContact(
  store: ContactStore,
  lane: MailLane,
  deskInbox: string,
  row: ContactRow,
): Promise<SendResult> {
  let result: SendResult;
  try {
    result = await lane.send(composeContactMail(row, deskInbox));
  } catch (err) {
    result = { ok: false, reason: `lane error: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (result.ok) {
    const { messageId } = result;
    await settle([() => store.markSent(row, messageId)], store.now);
  } else await store.markFailed(row, result.reason);
  return result;
}
