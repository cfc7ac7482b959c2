import type { Kysely } from "kysely";
import type { DB } from "../../db/schema.js";
import type { KeyServicePort } from "../../ports/key-service.js";
import type { KeyStore, KeyVerifier } from "../../ports/key-store.js";
import { AccountKeys } from "./account-keys.js";
import type { AuditEntry } from "./activity-log.js";
import type { UsageCounter } from "./usage.js";

export interface KeyServiceParts {
  /** The storage adapter: the embedded store or Unkey. It only stores. */
  storage: KeyStore;
  /**
   * The verification path over `storage`, composed by the caller in the open, outermost first: the
   * server's is `new Throttled(guesses, new Counted(usage, new Pooled(quotas, limiter, storage)))`;
   * the CLI, which verifies nothing, passes `storage` itself.
   */
  verifier: KeyVerifier;
  db: Kysely<DB>;
  usage: UsageCounter;
  now?: () => Date;
  /** Where each key event of an account goes (the audit log); nowhere when unset. */
  onEvent?: (e: AuditEntry) => void;
}

/**
 * The one key service: everything the app, the account page and the CLI do with API keys goes
 * through it.
 *
 * - `verify` (with `cost`, the spend) and `refund`: the hot path, through the composed `verifier`.
 *   Expected failures are values (`KeyVerification`: a verdict, or `unavailable`), never thrown.
 * - `create`, `list`, `revoke`, `roll`, `update`: the operator's operations on the stored keys.
 * - `accounts`: the rules of self-service keys under plans (caps, rolls with a grace period,
 *   revoking a roll's pair, edits within the plan, plan grants, the account's quota); refusals
 *   are values (`Result`).
 * - `usage`: charged calls per key and hour.
 */
export class KeyService implements KeyServicePort {
  readonly storage: KeyStore;
  readonly accounts: AccountKeys;
  readonly usage: UsageCounter;
  readonly verify: KeyVerifier["verify"];
  readonly refund: KeyVerifier["refund"];

  constructor(parts: KeyServiceParts) {
    const { storage, verifier, usage } = parts;
    this.storage = storage;
    this.usage = usage;
    this.accounts = new AccountKeys(storage, parts.db, usage, parts.now, parts.onEvent);
    // The verifier's own functions: the hot path gains no layer here.
    this.verify = verifier.verify.bind(verifier);
    this.refund = verifier.refund.bind(verifier);
  }

  create: KeyStore["create"] = (input) => this.storage.create(input);
  list: KeyStore["list"] = (ownerId) => this.storage.list(ownerId);
  revoke: KeyStore["revoke"] = (id, ownerId) => this.storage.revoke(id, ownerId);
  roll: KeyStore["roll"] = (id, ownerId, opts) => this.storage.roll(id, ownerId, opts);
  update: KeyStore["update"] = (id, patch, ownerId) => this.storage.update(id, patch, ownerId);
}

// The port's domain parts (ports/key-service.ts) are this feature's: AppDeps.keys has them by type.
declare module "../../ports/key-service.js" {
  interface KeyServiceDomain {
    readonly accounts: AccountKeys;
    readonly usage: UsageCounter;
  }
}
