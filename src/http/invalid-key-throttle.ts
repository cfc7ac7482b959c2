import type { Context, MiddlewareHandler } from "hono";
import { LRUCache } from "lru-cache";
import { sha256Hex } from "../lib/hash.js";
import type { KeyVerification, KeyVerifier, Refund, VerifyOptions } from "../ports/key-store.js";
import type { LimitDecision, LimitRule, RateLimiter } from "../ports/rate-limiter.js";
import { type Documented, documented, errorAnswer, retryAfterHeader } from "./contract.js";
import { ApiError } from "./errors.js";
import { parseBearer } from "./key-auth.js";
import type { AppEnv } from "./types.js";

export const INVALID_KEY_REASON = "INVALID_KEY_LIMIT";
const WINDOW_SEC = 600;
/** How long a token the key store recognised skips the reservation (it is still verified every call). */
const KNOWN_TTL_MS = 60_000;
const KNOWN_MAX = 10_000;

/**
 * Verdicts that say the token exists (whatever else they refuse): not a guess. A revoked or
 * expired key is one too: a fleet still sending the key its owner just rolled (a leak) or let
 * expire is told 401 each time, but spends no point, so its address is not locked out of the
 * replacement.
 */
const EXISTS = new Set(["VALID", "INSUFFICIENT_PERMISSIONS", "RATE_LIMITED", "USAGE_EXCEEDED", "DISABLED", "EXPIRED"]);

const isRejectedKey = (c: Context<AppEnv>) =>
  c.error instanceof ApiError && c.error.code === "unauthorized" && c.error.reason === "INVALID";

/**
 * Throttles key guessing: each answer 401 `INVALID` for a token that is no key (not a revoked or
 * expired one) costs the client
 * IP one point of `limit` per 10 minutes; once they are spent, every request from that IP that
 * sends a bearer token not recognised in the last minute is refused with 429 before its key is
 * looked at (so a guesser costs neither the database nor Unkey). Requests without a well-formed token are not affected, and
 * the counters are the shared limiter's (Redis across instances, DATA_DIR/limits.db otherwise).
 *
 * Spend first, then act: a token the key store has not recognised recently reserves its point
 * before it is verified, and gets it back when the verdict is not `INVALID`; so however many
 * arrive at once, at most `limit` unknown tokens per IP and window reach the key store. A token
 * the store recognised in the last minute (`learn`, told by `Throttled`) is not throttled at all, even from a
 * throttled IP: a customer's own traffic, however concurrent, never waits on reservations, and
 * wrong keys sent from the same address (a shared NAT, a neighbour in the same /64) cannot lock
 * it out of a key it is using; concurrent
 * requests with one not-yet-known token wait for the first one's verdict (not its whole request:
 * a key's verdict lets them go at once) instead of each
 * reserving. A reservation refused while this instance still has reservations of that IP in
 * flight waits for one of them to settle rather than failing a key that may be valid.
 */
export class InvalidKeyThrottle {
  private readonly rule: LimitRule;
  private readonly known = new LRUCache<string, true>({ max: KNOWN_MAX, ttl: KNOWN_TTL_MS });
  /** First verification of a not-yet-known token, by token hash, and how to end it. */
  private readonly flights = new Map<string, { done: Promise<void>; land: () => void }>();
  /** Reservations in flight here, by IP, and who waits for one to settle. */
  private readonly reserved = new Map<string, { count: number; waiters: (() => void)[] }>();

  constructor(
    private readonly limiter: RateLimiter,
    readonly limit: number,
  ) {
    this.rule = { name: "invalid-key", points: limit, durationSec: WINDOW_SEC };
  }

  /** Tells this throttle the verdict on `token` (every verification, any route: see `Throttled`). */
  learn(token: string, v: KeyVerification) {
    if (v.kind !== "verdict") return;
    const hash = sha256Hex(token);
    if (EXISTS.has(v.code)) {
      this.known.set(hash, true);
      // The token is a key: the requests waiting for this verdict go on now, not after the
      // first request's whole job (a new key's first burst ran one call at a time).
      this.flights.get(hash)?.land();
    } else this.known.delete(hash);
  }

  middleware(): Documented<MiddlewareHandler<AppEnv>> {
    const contract = {
      answers: {
        "429": errorAnswer(
          `Too many rejected API keys from this client IP (${this.limit} in 10 minutes): requests with a bearer token the key store has not recognised in the last minute are refused until the window resets.`,
          { invalidKeys: { code: "rate_limited", message: this.message(), reason: INVALID_KEY_REASON } },
          { "Retry-After": retryAfterHeader("Seconds until the window resets.") },
        ),
      },
    };
    // Not async where there is no token: every /v1 request passes here.
    return documented<MiddlewareHandler<AppEnv>>((c, next) => {
      const token = parseBearer(c.req.header("authorization"));
      return token === null ? next() : this.guard(c, next, token);
    }, contract);
  }

  /** A request with a bearer token: verified on a reserved point unless the token is known (class comment). */
  private async guard(c: Context<AppEnv>, next: () => Promise<void>, token: string): Promise<void> {
    const ip = c.get("clientKey");
    const hash = sha256Hex(token);

    for (;;) {
      // A token the key store recognised in the last minute is not a guess: it is verified as
      // usual and never refused here, so a neighbour's wrong keys from the same address cannot
      // lock a customer out of a key in use (and the customer's calls cost no limiter read).
      if (this.known.has(hash)) break;
      const flight = this.flights.get(hash);
      if (flight) {
        await flight.done;
        continue;
      }
      // Claimed before anything is awaited, so concurrent requests with this token wait for it.
      const land = this.fly(hash);
      const d = await this.limiter.consume(this.rule, ip, 1).catch((err: unknown) => {
        land();
        throw err;
      });
      if (d.allowed) return this.verifyReserved(c, next, ip, hash, land);
      land();
      if (!(await this.settled(ip))) throw this.refused(d);
    }

    await next();
    if (this.guessed(c, hash)) await this.limiter.consume(this.rule, ip, 1);
  }

  /** The request was answered 401 `INVALID` for a token that is no key at all (not revoked, not expired). */
  private guessed(c: Context<AppEnv>, hash: string): boolean {
    return isRejectedKey(c) && !this.known.has(hash);
  }

  /** Marks the first verification of a token as under way; the function returned ends it. */
  private fly(hash: string): () => void {
    let resolve = () => {};
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const flight = {
      done,
      land: () => {
        if (this.flights.get(hash) === flight) this.flights.delete(hash);
        resolve();
      },
    };
    this.flights.set(hash, flight);
    return flight.land;
  }

  /** Runs the request on a reserved point: kept when the key is rejected, refunded otherwise. */
  private async verifyReserved(
    c: Context<AppEnv>,
    next: () => Promise<void>,
    ip: string,
    hash: string,
    land: () => void,
  ) {
    const slot = this.reserved.get(ip) ?? { count: 0, waiters: [] };
    slot.count++;
    this.reserved.set(ip, slot);
    try {
      await next();
      // A refund that fails leaves the point spent: the safe side, and never this request's error.
      if (!this.guessed(c, hash)) await this.limiter.refund(this.rule, ip, 1).catch(() => {});
    } finally {
      land();
      slot.count--;
      if (slot.count === 0) this.reserved.delete(ip);
      for (const wake of slot.waiters.splice(0)) wake();
    }
  }

  /** Resolves true once a reservation of `ip` in flight here settles; false at once if none is. */
  private settled(ip: string): Promise<boolean> {
    const slot = this.reserved.get(ip);
    if (!slot) return Promise.resolve(false);
    return new Promise((resolve) => slot.waiters.push(() => resolve(true)));
  }

  private message(): string {
    return `Too many requests with rejected API keys from this address (${this.limit} in 10 minutes); retry later.`;
  }

  private refused(d: LimitDecision): ApiError {
    return new ApiError("rate_limited", this.message(), {
      reason: INVALID_KEY_REASON,
      headers: { "Retry-After": String(Math.max(1, Math.ceil(d.resetMs / 1000))) },
    });
  }
}

/** The key service's outermost layer: tells the throttle which tokens the layers under it recognise. */
export class Throttled implements KeyVerifier {
  constructor(
    private readonly throttle: InvalidKeyThrottle,
    private readonly inner: KeyVerifier,
  ) {}

  async verify(token: string, permission?: string, opts?: VerifyOptions): Promise<KeyVerification> {
    const v = await this.inner.verify(token, permission, opts);
    this.throttle.learn(token, v);
    return v;
  }

  refund(id: string, uses: number, refund?: Refund): Promise<boolean> {
    return this.inner.refund(id, uses, refund);
  }
}
