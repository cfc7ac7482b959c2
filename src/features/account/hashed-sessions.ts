import { createHash } from "node:crypto";
import type { BetterAuthOptions } from "better-auth";
import type { DBAdapter } from "better-auth/adapters";

/**
 * better-auth 1.7 stores the session token itself in `session.token`; it has no option to store
 * a hash. This wraps its database adapter so that only `h:` + SHA-256(token) reaches the table:
 * tokens in `where`, `data` and `update` of the session model are hashed on the way in, and the
 * caller's plaintext token is put back on rows coming out. A value already of the `h:` form
 * (a row read back, e.g. when revoking sessions listed by user) passes through unchanged; the
 * cookie carrying the token is HMAC-signed, so a client cannot submit a hash it read elsewhere.
 */
const PREFIX = "h:";
const SESSION_MODELS = new Set(["session", "auth_session"]);

export const hashSessionToken = (token: string): string =>
  token.startsWith(PREFIX) ? token : PREFIX + createHash("sha256").update(token).digest("base64url");

type Where = { field: string; value: unknown; [k: string]: unknown };
type Arg = { model?: string; where?: Where[]; data?: Record<string, unknown>; update?: Record<string, unknown> };

const hashValue = (v: unknown): unknown =>
  typeof v === "string" ? hashSessionToken(v) : Array.isArray(v) ? v.map(hashValue) : v;

function hashTokenField(row: Record<string, unknown> | undefined) {
  return row && typeof row.token === "string" ? { ...row, token: hashSessionToken(row.token) } : row;
}

function restore(result: unknown, plain: string | undefined): unknown {
  if (!plain) return result;
  if (Array.isArray(result)) return result.map((r) => restore(r, plain));
  if (result && typeof result === "object" && (result as { token?: unknown }).token === hashSessionToken(plain)) {
    return { ...(result as object), token: plain };
  }
  return result;
}

function plainTokenOf(arg: Arg): string | undefined {
  const fromWhere = arg.where?.find((w) => w.field === "token" && typeof w.value === "string")?.value;
  const candidate = fromWhere ?? arg.data?.token;
  return typeof candidate === "string" && !candidate.startsWith(PREFIX) ? candidate : undefined;
}

function wrap(adapter: DBAdapter<BetterAuthOptions>): DBAdapter<BetterAuthOptions> {
  const out: Record<string, unknown> = { ...adapter };
  for (const [name, value] of Object.entries(adapter)) {
    if (typeof value !== "function") continue;
    const fn = value as (...args: unknown[]) => Promise<unknown>;
    if (name === "transaction") {
      out.transaction = (cb: (trx: DBAdapter<BetterAuthOptions>) => Promise<unknown>) =>
        adapter.transaction((trx) => cb(wrap(trx as DBAdapter<BetterAuthOptions>)));
      continue;
    }
    out[name] = async (arg: Arg, ...rest: unknown[]) => {
      if (!arg || typeof arg !== "object" || !SESSION_MODELS.has(arg.model ?? ""))
        return fn.call(adapter, arg, ...rest);
      const plain = plainTokenOf(arg);
      const hashed: Arg = {
        ...arg,
        ...(arg.where && {
          where: arg.where.map((w) => (w.field === "token" ? { ...w, value: hashValue(w.value) } : w)),
        }),
        ...(arg.data && { data: hashTokenField(arg.data) }),
        ...(arg.update && { update: hashTokenField(arg.update) }),
      };
      return restore(await fn.call(adapter, hashed, ...rest), plain);
    };
  }
  return out as DBAdapter<BetterAuthOptions>;
}

/** Wraps an adapter factory (e.g. `kyselyAdapter(db, …)`) so session tokens are stored hashed. */
export function withHashedSessionTokens(
  factory: (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions>,
): (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions> {
  return (options) => wrap(factory(options));
}
