import type { KeyVerification, KeyVerifier, Refund, VerifyOptions } from "../../ports/key-store.js";
import { hourOf, type UsageCounter } from "./usage.js";

/**
 * The key service's counting layer: counts every charged, valid verification (classify calls, keyed GETs) per key,
 * for the account page and `GET /v1/usage`, and every charged call the store refused for a known
 * key (the account page's chart). Free checks (cost 0: replays, invalid bodies, the usage
 * endpoint itself) are not counted, and a refund (the charged job failed) takes its call back.
 */
export class Counted implements KeyVerifier {
  constructor(
    private readonly usage: UsageCounter,
    private readonly inner: KeyVerifier,
  ) {}

  async verify(key: string, permission?: string, opts: VerifyOptions = {}): Promise<KeyVerification> {
    const v = await this.inner.verify(key, permission, opts);
    if (v.kind === "verdict" && v.keyId && (opts.cost ?? 1) > 0) {
      const at = this.usage.now();
      const countedIn = hourOf(at);
      this.usage.record(v.keyId, v.code === "VALID" ? "allowed" : "refused", 1, countedIn);
      if (v.code === "VALID") return { ...v, countedIn, chargedAt: at.toISOString() };
    }
    return v;
  }

  /** A refund: the call was counted as charged (in the hour `refund.countedIn`), and is not any more. */
  async refund(id: string, uses: number, refund: Refund = {}): Promise<boolean> {
    const found = await this.inner.refund(id, uses, refund);
    if (found) this.usage.record(id, "refunded", uses, refund.countedIn);
    return found;
  }
}
