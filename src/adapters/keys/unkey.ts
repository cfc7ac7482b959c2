import { z } from "zod";
import type {
  CreatedKey,
  CreateKeyInput,
  KeyInfo,
  KeyStore,
  KeyUpdate,
  KeyVerdict,
  KeyVerification,
  RollOptions,
  VerifyOptions,
} from "../../ports/key-store.js";
import { displayParts, KEY_PREFIX, keyStatus } from "./material.js";
import { callUnkey, type UnkeyHttpOptions, type UnkeyResponse, unkeyErrorDetail } from "./unkey-http.js";

export interface UnkeyOptions extends UnkeyHttpOptions {
  /** Where keys are created and listed (verification is confined by the root key's scope). */
  apiId?: string;
  now?: () => Date;
}

/** The parts of `POST /v2/keys.verifyKey`'s answer we use; everything else may vary. */
const VerifyResponse = z.object({
  data: z.object({
    valid: z.boolean(),
    code: z.string(),
    keyId: z.string().optional(),
    credits: z.number().int().nullish(),
    identity: z.object({ externalId: z.string() }).nullish(),
    ratelimits: z
      .array(
        z.object({
          exceeded: z.boolean(),
          limit: z.number(),
          remaining: z.number(),
          reset: z.number(),
          duration: z.number().nullish(),
        }),
      )
      .nullish(),
  }),
});

/** Every code Unkey v2 documents, onto the port's verdicts. */
const CODES: Record<string, KeyVerdict> = {
  VALID: "VALID",
  NOT_FOUND: "NOT_FOUND",
  EXPIRED: "EXPIRED",
  DISABLED: "DISABLED",
  FORBIDDEN: "INSUFFICIENT_PERMISSIONS",
  INSUFFICIENT_PERMISSIONS: "INSUFFICIENT_PERMISSIONS",
  RATE_LIMITED: "RATE_LIMITED",
  USAGE_EXCEEDED: "USAGE_EXCEEDED",
  INSUFFICIENT_CREDITS: "USAGE_EXCEEDED",
};

const KeyData = z.object({
  keyId: z.string(),
  start: z.string().optional(),
  enabled: z.boolean().optional(),
  name: z.string().optional(),
  meta: z.record(z.string(), z.unknown()).nullish(),
  createdAt: z.number().optional(),
  expires: z.number().nullish(),
  externalId: z.string().nullish(),
  identity: z.object({ externalId: z.string() }).nullish(),
  permissions: z.array(z.string()).nullish(),
  credits: z.object({ remaining: z.number().nullable() }).nullish(),
  ratelimits: z.array(z.object({ limit: z.number(), duration: z.number() })).nullish(),
});
type KeyData = z.infer<typeof KeyData>;

const Created = z.object({ data: z.object({ keyId: z.string(), key: z.string() }) });
const Listed = z.object({
  data: z.array(KeyData),
  pagination: z.object({ cursor: z.string().nullish(), hasMore: z.boolean() }).nullish(),
});

/** A management call Unkey refused or could not answer (CLI and account page show the message). */
export class UnkeyError extends Error {
  override name = "UnkeyError";
}

/** API keys at Unkey (`UNKEY_ROOT_KEY` set). An unreachable, slow, 5xx or garbled Unkey is `unavailable`. */
export class UnkeyKeyStore implements KeyStore {
  private readonly now: () => Date;
  constructor(private readonly opts: UnkeyOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  async verify(key: string, permission?: string, opts: VerifyOptions = {}): Promise<KeyVerification> {
    const cost = opts.cost ?? 1;
    const res = await callUnkey(this.opts, "/v2/keys.verifyKey", {
      key,
      ...(permission !== undefined && { permissions: permission }),
      ...(cost !== 1 && { credits: { cost } }),
    });
    const v = this.verdict(res);
    // Unkey may have spent the credit of a verification whose answer was lost (a timeout, a
    // reset, a garbled body): the call is a 503, so the credit goes back (see giveBackLost).
    if (v.kind === "unavailable" && cost > 0 && (res.ok ? res.status === 200 : res.sent)) this.giveBackLost(key, cost);
    return v;
  }

  /**
   * Gives back the `cost` that a verification whose answer was lost may have spent: looks the key
   * up by its text (`keys.whoami`: no verification, no rate limit spent) and, if it has credits,
   * adds `cost` back (`keys.updateCredits` increment). In the background, so the 503 is not held
   * up by a slow Unkey; when Unkey cannot answer that either (or the root key may not read keys),
   * the credit stays spent. A verification that Unkey had not acted on (its answer lost before
   * it was made) gives its key one credit more.
   */
  private giveBackLost(key: string, cost: number): void {
    const refund = async () => {
      const found = KeyData.parse(((await this.manage("/v2/keys.whoami", { key })) as { data: unknown }).data);
      if (found.credits?.remaining == null) return;
      await this.manage("/v2/keys.updateCredits", { keyId: found.keyId, operation: "increment", value: cost });
    };
    void refund().catch(() => undefined);
  }

  /** What a verifyKey answer says: a verdict, or unavailable when it is no usable answer. */
  private verdict(res: UnkeyResponse): KeyVerification {
    if (!res.ok) return { kind: "unavailable", store: "unkey", detail: res.detail };
    if (res.status !== 200) {
      return {
        kind: "unavailable",
        store: "unkey",
        detail: `Unkey verifyKey answered ${res.status}: ${unkeyErrorDetail(res.body)}`,
      };
    }
    const parsed = VerifyResponse.safeParse(res.body);
    if (!parsed.success) return { kind: "unavailable", store: "unkey", detail: "Unkey verifyKey answer is malformed" };
    const d = parsed.data.data;
    const code = CODES[d.code];
    // An unknown code, or `valid` contradicting `code`, is an answer we cannot trust either way.
    if (code === undefined || (code === "VALID") !== d.valid) {
      return {
        kind: "unavailable",
        store: "unkey",
        detail: `Unkey verifyKey answered valid=${d.valid} code=${d.code}`,
      };
    }
    const rl = d.ratelimits?.find((r) => r.exceeded) ?? d.ratelimits?.[0];
    const nowMs = this.now().getTime();
    return {
      kind: "verdict",
      code,
      keyId: d.keyId,
      ownerId: d.identity?.externalId ?? null,
      remaining: d.credits ?? null,
      ...(rl && {
        // `reset` is a Unix time in ms (v2 handler: Reset.UnixMilli()); tolerate a duration too.
        ratelimit: {
          limit: rl.limit,
          remaining: rl.remaining,
          resetMs: Math.max(0, rl.reset > 1e12 ? rl.reset - nowMs : rl.reset),
          name: "key",
          // `duration` is in ms (RatelimitRequest); older answers leave it out.
          ...(rl.duration && { durationSec: Math.round(rl.duration / 1000) }),
        },
      }),
    };
  }

  async create(input: CreateKeyInput): Promise<CreatedKey> {
    const apiId = this.apiId();
    const body = {
      apiId,
      prefix: KEY_PREFIX,
      name: input.name,
      ...(input.ownerId && { externalId: input.ownerId }),
      ...(input.permissions.length > 0 && { permissions: input.permissions }),
      ...(input.expiresAt && { expires: Date.parse(input.expiresAt) }),
      ...(input.remaining != null && { credits: { remaining: input.remaining } }),
      ...(input.ratelimit && { ratelimits: ratelimits(input.ratelimit) }),
    };
    const { keyId, key } = Created.parse(await this.manage("/v2/keys.createKey", body)).data;
    // Unkey stores only a hash: keep the last four characters for display (best effort).
    await this.manage("/v2/keys.updateKey", { keyId, meta: { last4: displayParts(key).last4 } }).catch(() => undefined);
    const createdAt = this.now().toISOString();
    return {
      id: keyId,
      key,
      name: input.name,
      ownerId: input.ownerId ?? null,
      prefix: displayParts(key).start,
      last4: displayParts(key).last4,
      permissions: input.permissions,
      createdAt,
      expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      lastUsedAt: null,
      remaining: input.remaining ?? null,
      ratelimit: input.ratelimit ?? null,
      status: "active",
      replaces: null,
    };
  }

  async list(ownerId?: string | null): Promise<KeyInfo[]> {
    const apiId = this.apiId();
    const out: KeyInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = Listed.parse(
        await this.manage("/v2/apis.listKeys", {
          apiId,
          limit: 100,
          ...(cursor && { cursor }),
          ...(ownerId && { externalId: ownerId }),
        }),
      );
      out.push(...res.data.map((k) => this.info(k)));
      if (!res.pagination?.hasMore || !res.pagination.cursor) break;
      cursor = res.pagination.cursor;
    }
    return ownerId === null ? out.filter((k) => k.ownerId === null) : out;
  }

  async revoke(id: string, ownerId?: string | null): Promise<boolean> {
    const key = await this.get(id, ownerId);
    if (!key) return false;
    if (key.enabled !== false) await this.manage("/v2/keys.updateKey", { keyId: id, enabled: false });
    return true;
  }

  async roll(id: string, ownerId?: string | null, opts: RollOptions = {}): Promise<CreatedKey | null> {
    const old = await this.get(id, ownerId);
    if (!old || old.enabled === false || (old.expires && old.expires <= this.now().getTime())) return null;
    if (typeof old.meta?.rolledTo === "string") return null; // a key rolls once
    // `expiration`: milliseconds until Unkey revokes the ORIGINAL key (0: at once). The new key
    // keeps the original's own settings, expiry included (Unkey copies them).
    const expiration = Math.max(0, Math.round((opts.graceSec ?? 0) * 1000));
    const { keyId, key } = Created.parse(await this.manage("/v2/keys.rerollKey", { keyId: id, expiration })).data;
    const { start, last4 } = displayParts(key);
    const { rolledTo: _, ...meta } = old.meta ?? {};
    await this.manage("/v2/keys.updateKey", { keyId, meta: { ...meta, last4, replaces: id } }).catch(() => undefined);
    await this.manage("/v2/keys.updateKey", { keyId: id, meta: { ...(old.meta ?? {}), rolledTo: keyId } }).catch(
      () => undefined,
    );
    return {
      ...this.info(old),
      id: keyId,
      key,
      prefix: start,
      last4,
      createdAt: this.now().toISOString(),
      replaces: id,
    };
  }

  /** `keys.updateKey` with only the fields that change (`null` clears: no expiry, unlimited, no rate limit). */
  async update(id: string, patch: KeyUpdate, ownerId?: string | null): Promise<KeyInfo | null> {
    if (!(await this.get(id, ownerId))) return null;
    const res = await this.send("/v2/keys.updateKey", {
      keyId: id,
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.expiresAt !== undefined && {
        expires: patch.expiresAt === null ? null : Date.parse(patch.expiresAt),
      }),
      ...(patch.permissions !== undefined && { permissions: patch.permissions }),
      ...(patch.remaining !== undefined && {
        credits: patch.remaining === null ? null : { remaining: patch.remaining },
      }),
      ...(patch.ratelimit !== undefined && {
        ratelimits: patch.ratelimit === null ? null : ratelimits(patch.ratelimit),
      }),
    });
    if (res.ok && res.status === 404) return null;
    this.check("/v2/keys.updateKey", res);
    const after = await this.get(id);
    return after ? this.info(after) : null;
  }

  /** `keys.updateCredits` with `increment` (a key without credits is unlimited: nothing to give back). */
  async refund(id: string, uses: number): Promise<boolean> {
    const key = await this.get(id);
    if (!key) return false;
    if (key.credits?.remaining == null) return true;
    const res = await this.send("/v2/keys.updateCredits", { keyId: id, operation: "increment", value: uses });
    if (res.ok && res.status === 404) return false;
    this.check("/v2/keys.updateCredits", res);
    return true;
  }

  /** The key, or undefined when it does not exist or belongs to another owner. */
  private async get(id: string, ownerId?: string | null): Promise<KeyData | undefined> {
    const res = await this.send("/v2/keys.getKey", { keyId: id });
    if (res.ok && res.status === 404) return undefined;
    const key = KeyData.parse((this.check("/v2/keys.getKey", res) as { data: unknown }).data);
    const owner = key.identity?.externalId ?? key.externalId ?? null;
    if (ownerId !== undefined && owner !== ownerId) return undefined;
    return key;
  }

  private info(k: KeyData): KeyInfo {
    const expiresAt = k.expires ? new Date(k.expires).toISOString() : null;
    const remaining = k.credits?.remaining ?? null;
    const rl = k.ratelimits?.[0];
    return {
      id: k.keyId,
      name: k.name ?? "",
      ownerId: k.identity?.externalId ?? k.externalId ?? null,
      prefix: k.start ?? `${KEY_PREFIX}_`,
      last4: typeof k.meta?.last4 === "string" ? k.meta.last4 : "",
      permissions: k.permissions ?? [],
      createdAt: new Date(k.createdAt ?? 0).toISOString(),
      expiresAt,
      lastUsedAt: null,
      remaining,
      ratelimit: rl ? { limit: rl.limit, durationSec: Math.round(rl.duration / 1000) } : null,
      status: keyStatus({ revoked: k.enabled === false, expiresAt, remaining, now: this.now() }),
      replaces: typeof k.meta?.replaces === "string" ? k.meta.replaces : null,
    };
  }

  private apiId(): string {
    if (!this.opts.apiId) throw new UnkeyError("UNKEY_API_ID must be set to create or list keys with Unkey");
    return this.opts.apiId;
  }

  private send(path: string, payload: unknown): Promise<UnkeyResponse> {
    return callUnkey(this.opts, path, payload);
  }

  private async manage(path: string, payload: unknown): Promise<unknown> {
    return this.check(path, await this.send(path, payload));
  }

  private check(path: string, res: UnkeyResponse): unknown {
    if (!res.ok) throw new UnkeyError(res.detail);
    if (res.status < 200 || res.status > 299) {
      throw new UnkeyError(`Unkey ${path} answered ${res.status}: ${unkeyErrorDetail(res.body)}`);
    }
    return res.body;
  }
}

/** Our one rate limit as Unkey's `ratelimits` (RatelimitRequest: duration in ms, applied on every verification). */
function ratelimits(rl: { limit: number; durationSec: number }) {
  return [{ name: "requests", limit: rl.limit, duration: rl.durationSec * 1000, autoApply: true }];
}
