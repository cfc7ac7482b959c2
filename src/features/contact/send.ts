import { setTimeout as sleep } from "node:timers/promises";
import type { AppDeps } from "../../app-deps.js";
import { IDEMPOTENCY_TTL_MS } from "../../db/idempotency.js";
import { networkOf } from "../../http/client-ip.js";
import { ApiError } from "../../http/errors.js";
import type { MailLane } from "../../ports/mail-lane.js";
import type { OnceAnswer } from "../shared/idempotency.js";
import { idempotencyRefusalError } from "../shared/idempotency-answers.js";
import { deliverContact } from "./deliver.js";
import { refundContactLimits, spendContactLimits } from "./limits.js";
import { pendingGraceMs } from "./outbox.js";
import { type ContactRow, type ContactStore, type LeasedClaim, type NewContact, sameMessage } from "./store.js";

/** What the contact desk uses of the app's dependencies. */
export type ContactDeps = Pick<AppDeps, "config" | "database" | "idempotency" | "limiter" | "mail" | "now">;

const MAX_POLL_MS = 200;

export interface ContactSend {
  deps: ContactDeps;
  store: ContactStore;
  lane: MailLane;
  /** `clientKey`: what the per-client budget counts by, and whose Idempotency-Key it is (http/client-ip.ts). */
  input: NewContact & { clientIp: string; clientKey: string };
}

/**
 * Spends the limits, then stores the message and sends it. Under `claim`, stored only while the
 * claim is still this request's: else (taken over) the limits go back and it is a 409.
 */
export async function sendContact(send: ContactSend, claim?: LeasedClaim): Promise<OnceAnswer> {
  const headers = await spendContactLimits(send.deps.limiter, send.deps.config, send.input.clientKey);
  const stored = await refundingIfThrows(send, () => send.store.create(send.input, claim));
  if (stored) return deliver(send, stored, headers);
  await refundContactLimits(send.deps.limiter, send.deps.config, send.input.clientKey);
  throw idempotencyRefusalError({ kind: "in_progress" });
}

/**
 * `step`'s value; if it throws (the database failed), the limits just spent are given back
 * first: nothing was stored or sent, so the client's hour and the desk's day are as they were.
 */
async function refundingIfThrows<T>({ deps, input }: ContactSend, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    await refundContactLimits(deps.limiter, deps.config, input.clientKey).catch(() => undefined);
    throw err;
  }
}

/**
 * Sends `sending` (stored, or an earlier message claimed) and answers. A refused send is a 502
 * naming the stored message, which stays `failed` for a retry or the outbox.
 */
async function deliver(
  { deps, store, lane }: ContactSend,
  sending: ContactRow,
  headers: Record<string, string>,
): Promise<OnceAnswer> {
  const result = await deliverContact(store, lane, deps.config.CONTACT_TO, sending);
  if (!result.ok) {
    throw new ApiError(
      "upstream_error",
      "The mail server refused the message; it has been stored for the operator to resend.",
      { details: { id: sending.id }, headers, cause: result.reason },
    );
  }
  return { body: { id: sending.id, status: "sent" as const }, headers };
}

/**
 * One message per client and Idempotency-Key, whatever the timing. Runs while holding the key's claim, so no
 * other request races it; the message this client stored under the key (last 24 h) decides: none → store and
 * send it; another content → 409; `sent` (by an earlier request or the outbox) → its success,
 * replayed; `failed`, or `pending` and abandoned (older than pendingGraceMs) → claimed
 * with the outbox's compare-and-set and sent again; `pending` otherwise (the outbox is sending it)
 * → looked at again until IDEMPOTENCY_WAIT_MS, then a 409 with Retry-After.
 */
export async function sendContactOnce(send: ContactSend, key: string, claim: LeasedClaim): Promise<OnceAnswer> {
  const { deps, store, input } = send;
  const deadline = Date.now() + deps.config.IDEMPOTENCY_WAIT_MS;
  const client = { key: input.clientKey, keyOf: (ip: string) => networkOf(ip, deps.config.CLIENT_IPV6_PREFIX) };
  for (let delay = 10; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    const nowMs = deps.now().getTime();
    const since = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
    const earlier = await store.byIdempotencyKey(key, client, since);
    if (!earlier) return sendContact(send, claim);
    if (!sameMessage(earlier, input)) throw idempotencyRefusalError({ kind: "mismatch" });
    if (earlier.status === "sent") {
      return { body: { id: earlier.id, status: "sent" as const }, headers: { "Idempotent-Replayed": "true" } };
    }
    const abandoned = nowMs - Date.parse(earlier.updated_at) >= pendingGraceMs(deps.config);
    if (earlier.status === "failed" || abandoned) {
      // The limits first: a retry they refuse leaves the stored message as it was, for the outbox.
      const headers = await spendContactLimits(deps.limiter, deps.config, input.clientKey);
      const claimed = await refundingIfThrows(send, () => store.claimRetry(earlier));
      if (claimed) return deliver(send, claimed, headers);
      await refundContactLimits(deps.limiter, deps.config, input.clientKey);
      continue; // the outbox (or the CLI) claimed it first: look again
    }
    const left = deadline - Date.now();
    if (left <= 0) throw idempotencyRefusalError({ kind: "in_progress" });
    await sleep(Math.min(delay, left));
  }
}
