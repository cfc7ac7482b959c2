import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import { PostFake, type RecordedCall } from "./post-fake.js";

interface FakeKey {
  keyId: string;
  key: string;
  name?: string;
  externalId?: string;
  permissions: string[];
  expires?: number;
  credits: number | null;
  ratelimit?: { name: string; limit: number; duration: number; windowStart: number; used: number };
  enabled: boolean;
  meta?: Record<string, unknown>;
  createdAt: number;
}

type Answer = { status: number; body: unknown };

let counter = 0;
const requestId = () => `req_${++counter}`;
const ok = (data: unknown, extra: object = {}): Answer => ({
  status: 200,
  body: { meta: { requestId: requestId() }, data, ...extra },
});
const err = (status: number, title: string, detail: string): Answer => ({
  status,
  body: {
    meta: { requestId: requestId() },
    error: { title, detail, status, type: `https://unkey.com/docs/errors/${title.toLowerCase().replace(/ /g, "_")}` },
  },
});

/**
 * Unkey's v2 API as a real HTTP server: keys.verifyKey, keys.createKey, keys.getKey, keys.whoami,
 * keys.updateKey, keys.updateCredits, keys.rerollKey, keys.deleteKey and apis.listKeys, following the published
 * request and response JSON (keys.updateKey validated as V2KeysUpdateKeyRequestBody; every verification outcome is HTTP 200 with data.valid/data.code;
 * ratelimits[].reset is a Unix time in ms). `forceCode` answers every verification with one code.
 */
export class FakeUnkey extends PostFake {
  readonly keys = new Map<string, FakeKey>();
  forceCode: string | null = null;
  now = () => Date.now();

  constructor(
    readonly rootKey = "unkey_root_test",
    readonly apiId = "api_test123",
  ) {
    super();
  }

  get verifyCalls(): RecordedCall[] {
    return this.callsTo("/v2/keys.verifyKey");
  }

  protected malformed(): unknown {
    return { meta: { requestId: requestId() }, data: { valid: "yes", status: 1 } };
  }

  protected handle(call: RecordedCall): Answer {
    if (call.authorization !== `Bearer ${this.rootKey}`) return err(401, "Unauthorized", "The root key is invalid.");
    const body = (call.body ?? {}) as Record<string, unknown>;
    switch (call.path) {
      case "/v2/keys.verifyKey":
        return this.verify(body);
      case "/v2/keys.createKey":
        return this.create(body);
      case "/v2/keys.getKey":
        return this.withKey(body, (k) => ok(this.view(k)));
      case "/v2/keys.whoami": {
        // V2KeysWhoamiRequestBody {key}; the answer's data is KeyResponseData, as getKey's.
        const k = [...this.keys.values()].find((x) => x.key === body.key);
        return k ? ok(this.view(k)) : err(404, "Not Found", "The requested key was not found.");
      }
      case "/v2/keys.updateKey":
        return this.withKey(body, (k) => this.update(k, body));
      case "/v2/keys.updateCredits":
        return this.withKey(body, (k) => this.updateCredits(k, body));
      case "/v2/keys.deleteKey":
        return this.withKey(body, (k) => {
          this.keys.delete(k.keyId);
          return ok({});
        });
      case "/v2/keys.rerollKey":
        return this.withKey(body, (k) => {
          const fresh: FakeKey = {
            ...k,
            keyId: newId(),
            key: `alm_${bs58.encode(randomBytes(16))}`,
            createdAt: this.now(),
          };
          this.keys.set(fresh.keyId, fresh);
          k.expires = this.now() + Number(body.expiration ?? 0);
          return ok({ keyId: fresh.keyId, key: fresh.key });
        });
      case "/v2/apis.listKeys":
        return this.list(body);
      default:
        return err(404, "Not Found", `No route ${call.path}`);
    }
  }

  private verify(body: Record<string, unknown>): Answer {
    if (typeof body.key !== "string" || body.key.length === 0) return err(400, "Bad Request", "key is required");
    if (this.forceCode) return ok({ valid: this.forceCode === "VALID", code: this.forceCode, keyId: "key_forced" });
    const k = [...this.keys.values()].find((x) => x.key === body.key);
    if (!k) return ok({ valid: false, code: "NOT_FOUND" });
    const base = {
      keyId: k.keyId,
      name: k.name,
      enabled: k.enabled,
      ...(k.expires !== undefined && { expires: k.expires }),
      ...(k.credits !== null && { credits: k.credits }),
      ...(k.externalId && { identity: { id: `id_${k.externalId}`, externalId: k.externalId } }),
      ...(k.meta && { meta: k.meta }),
    };
    const verdict = (code: string, extra: object = {}) => ok({ ...base, valid: code === "VALID", code, ...extra });
    if (!k.enabled) return verdict("DISABLED");
    if (k.expires !== undefined && k.expires <= this.now()) return verdict("EXPIRED");
    if (typeof body.permissions === "string" && !k.permissions.includes(body.permissions)) {
      return verdict("INSUFFICIENT_PERMISSIONS", { permissions: k.permissions });
    }
    const cost = Number((body.credits as { cost?: number } | undefined)?.cost ?? 1);
    // As Unkey's usage limiter decides (unkeyed/unkey internal/services/usagelimiter/limit.go:
    // denied only when `cost > 0 && remaining < cost`; the Redis counter tests `credits >= cost`):
    // a cost of 0 is valid on a key with no credits left, which replays and /v1/usage rely on.
    if (k.credits !== null && k.credits < cost) return verdict("USAGE_EXCEEDED");
    let ratelimits: object[] | undefined;
    if (k.ratelimit) {
      const rl = k.ratelimit;
      if (this.now() >= rl.windowStart + rl.duration) Object.assign(rl, { windowStart: this.now(), used: 0 });
      const exceeded = rl.used >= rl.limit;
      if (!exceeded) rl.used++;
      ratelimits = [
        {
          id: `rl_${k.keyId}`,
          name: rl.name,
          exceeded,
          limit: rl.limit,
          duration: rl.duration,
          reset: rl.windowStart + rl.duration,
          remaining: rl.limit - rl.used,
          autoApply: true,
        },
      ];
      if (exceeded) return verdict("RATE_LIMITED", { ratelimits });
    }
    if (k.credits !== null) k.credits -= cost;
    return ok({ ...base, ...(k.credits !== null && { credits: k.credits }), valid: true, code: "VALID", ratelimits });
  }

  /**
   * `keys.updateCredits`: `operation` set | increment | decrement; `value` required except for
   * `set` (null or absent: unlimited); a decrement floors at 0. Answers `data: {remaining}`.
   * Incrementing an unlimited key is not documented: refused here (the adapter never does it).
   */
  private updateCredits(k: FakeKey, body: Record<string, unknown>): Answer {
    const { operation, value } = body;
    if (operation === "set") {
      if (value != null && (!Number.isInteger(value) || Number(value) < 0)) return err(400, "Bad Request", "value");
      k.credits = value == null ? null : Number(value);
      return ok({ remaining: k.credits });
    }
    if (operation !== "increment" && operation !== "decrement") return err(400, "Bad Request", "operation");
    if (!Number.isInteger(value) || Number(value) < 0) return err(400, "Bad Request", "value is required");
    if (k.credits === null) return err(400, "Bad Request", "the key has unlimited credits");
    k.credits = operation === "increment" ? k.credits + Number(value) : Math.max(0, k.credits - Number(value));
    return ok({ remaining: k.credits });
  }

  /**
   * `keys.updateKey` as V2KeysUpdateKeyRequestBody says: only the fields present change, `null`
   * clears (name, meta, expiry; credits null = unlimited; ratelimits null = none), permissions are
   * replaced; any other property, or a field of the wrong shape, is 400.
   */
  private update(k: FakeKey, body: Record<string, unknown>): Answer {
    const bad = updateKeyProblem(body);
    if (bad) return err(400, "Bad Request", bad);
    if (typeof body.enabled === "boolean") k.enabled = body.enabled;
    if ("name" in body) k.name = (body.name ?? undefined) as string | undefined;
    if ("meta" in body) k.meta = (body.meta ?? undefined) as Record<string, unknown> | undefined;
    if ("expires" in body) k.expires = (body.expires ?? undefined) as number | undefined;
    if ("permissions" in body) k.permissions = body.permissions as string[];
    if ("credits" in body) k.credits = (body.credits as { remaining?: number | null } | null)?.remaining ?? null;
    if ("ratelimits" in body) {
      const rl = (body.ratelimits as { name: string; limit: number; duration: number }[] | null)?.[0];
      k.ratelimit = rl && { name: rl.name, limit: rl.limit, duration: rl.duration, windowStart: 0, used: 0 };
    }
    return ok({});
  }

  private create(body: Record<string, unknown>): Answer {
    if (body.apiId !== this.apiId) return err(404, "Not Found", `API ${String(body.apiId)} not found`);
    const rl = (body.ratelimits as { name: string; limit: number; duration: number }[] | undefined)?.[0];
    const k: FakeKey = {
      keyId: newId(),
      key: `${String(body.prefix ?? "key")}_${bs58.encode(randomBytes(Number(body.byteLength ?? 16)))}`,
      name: body.name as string | undefined,
      externalId: body.externalId as string | undefined,
      permissions: (body.permissions as string[] | undefined) ?? [],
      expires: body.expires as number | undefined,
      credits: (body.credits as { remaining: number } | undefined)?.remaining ?? null,
      ratelimit: rl && { name: rl.name, limit: rl.limit, duration: rl.duration, windowStart: 0, used: 0 },
      enabled: body.enabled !== false,
      meta: body.meta as Record<string, unknown> | undefined,
      createdAt: this.now(),
    };
    this.keys.set(k.keyId, k);
    return ok({ keyId: k.keyId, key: k.key });
  }

  private list(body: Record<string, unknown>): Answer {
    if (body.apiId !== this.apiId) return err(404, "Not Found", `API ${String(body.apiId)} not found`);
    const limit = Number(body.limit ?? 100);
    const all = [...this.keys.values()]
      .filter((k) => body.externalId === undefined || k.externalId === body.externalId)
      .sort((a, b) => a.keyId.localeCompare(b.keyId))
      .filter((k) => typeof body.cursor !== "string" || k.keyId > body.cursor);
    const page = all.slice(0, limit);
    const hasMore = all.length > limit;
    return ok(
      page.map((k) => this.view(k)),
      { pagination: { hasMore, ...(hasMore && { cursor: page.at(-1)?.keyId }) } },
    );
  }

  private withKey(body: Record<string, unknown>, fn: (k: FakeKey) => Answer): Answer {
    const k = this.keys.get(String(body.keyId));
    return k ? fn(k) : err(404, "Not Found", `key ${String(body.keyId)} not found`);
  }

  private view(k: FakeKey): object {
    return {
      keyId: k.keyId,
      start: k.key.slice(0, 8),
      enabled: k.enabled,
      ...(k.name && { name: k.name }),
      ...(k.meta && { meta: k.meta }),
      createdAt: k.createdAt,
      ...(k.expires !== undefined && { expires: k.expires }),
      ...(k.externalId && {
        externalId: k.externalId,
        identity: { id: `id_${k.externalId}`, externalId: k.externalId },
      }),
      permissions: k.permissions,
      ...(k.credits !== null && { credits: { remaining: k.credits } }),
      ...(k.ratelimit && {
        ratelimits: [
          {
            id: `rl_${k.keyId}`,
            name: k.ratelimit.name,
            limit: k.ratelimit.limit,
            duration: k.ratelimit.duration,
            autoApply: true,
          },
        ],
      }),
    };
  }
}

const UPDATE_FIELDS = new Set([
  "keyId",
  "name",
  "externalId",
  "meta",
  "expires",
  "credits",
  "ratelimits",
  "enabled",
  "roles",
  "permissions",
]);
const PERMISSION = /^[a-zA-Z0-9_:\-.*]+$/;
const isInt = (v: unknown, min: number) => Number.isInteger(v) && (v as number) >= min;

/** What is wrong with a keys.updateKey body by the published schema, or null. */
function updateKeyProblem(b: Record<string, unknown>): string | null {
  const extra = Object.keys(b).find((f) => !UPDATE_FIELDS.has(f));
  if (extra) return `unknown property ${extra}`;
  if ("name" in b && b.name !== null && (typeof b.name !== "string" || b.name.length < 1 || b.name.length > 255))
    return "name must be 1-255 characters or null";
  if ("expires" in b && b.expires !== null && !isInt(b.expires, 0)) return "expires must be a Unix time in ms or null";
  if ("enabled" in b && typeof b.enabled !== "boolean") return "enabled must be a boolean";
  if ("permissions" in b) {
    const p = b.permissions;
    if (
      !Array.isArray(p) ||
      p.some((x) => typeof x !== "string" || x.length < 3 || x.length > 100 || !PERMISSION.test(x))
    )
      return "permissions must be an array of permission names";
  }
  if ("credits" in b && b.credits !== null) {
    const c = b.credits as Record<string, unknown>;
    if (typeof c !== "object" || Object.keys(c).some((f) => f !== "remaining" && f !== "refill"))
      return "credits must be {remaining, refill} or null";
    if ("remaining" in c && c.remaining !== null && !isInt(c.remaining, 0))
      return "credits.remaining must be a whole number or null";
  }
  if ("ratelimits" in b && b.ratelimits !== null) {
    const r = b.ratelimits;
    const valid = (x: Record<string, unknown>) =>
      typeof x.name === "string" &&
      x.name.length >= 3 &&
      isInt(x.limit, 1) &&
      isInt(x.duration, 1000) &&
      typeof x.autoApply === "boolean";
    if (!Array.isArray(r) || r.length > 50 || !r.every(valid))
      return "ratelimits must be RatelimitRequest items {name, limit, duration, autoApply}";
  }
  return null;
}

const newId = () => `key_${bs58.encode(randomBytes(10))}`;
