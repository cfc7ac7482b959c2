import { type Command, InvalidArgumentError } from "commander";
import { createLogger } from "../adapters/logger.js";
import { type AdminDeps, buildAdminDeps } from "../admin.js";
import type { Config } from "../config.js";
import {
  CLEAR_WORDS,
  isKeyName,
  isPlanName,
  KEY_NAME_RULE,
  type KeyService,
  keyRefusalMessage,
  MAX_USES,
  PLAN_NAMES,
  parseRatelimit,
  parseUses,
} from "../features/keys/index.js";
import { CliError, type CliIo, errorLine, printJson, wholeNumber } from "./io.js";

/** A roll's grace period: at most a year. */
const MAX_GRACE_SEC = 365 * 86_400;

function ratelimit(value: string): { limit: number; durationSec: number } {
  const rl = parseRatelimit(value);
  if (!rl) throw new InvalidArgumentError("expected N/SECONDS, e.g. 100/60 for 100 calls per minute.");
  return rl;
}

/**
 * Options of `keys update` that may clear a setting (`none`, `unlimited`, `never`). Boxed, as
 * commander turns a parser's null into an empty string.
 */
type Cleared<T> = { to: T | null };
const orClear =
  <T>(parse: (value: string) => T) =>
  (value: string): Cleared<T> => ({ to: CLEAR_WORDS.has(value) ? null : parse(value) });

/** `--remaining`: a whole number, or `unlimited`. */
function uses(value: string): number {
  const n = parseUses(value);
  if (n === undefined)
    throw new InvalidArgumentError(`--remaining must be a whole number up to ${MAX_USES}, or unlimited.`);
  return n;
}

function isoDate(value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new InvalidArgumentError("expected an ISO 8601 date or time, e.g. 2026-12-31T23:59:59Z.");
  }
  return new Date(ms).toISOString();
}

/** `--name`: trimmed, 1 to 64 printable characters (as on the account page). */
function keyName(value: string): string {
  const name = value.trim();
  if (!isKeyName(name)) throw new InvalidArgumentError(KEY_NAME_RULE);
  return name;
}

/** An e-mail address as plans take it: something@somewhere, no spaces. */
function email(value: string): string {
  if (!/^[^\s@]+@[^\s@]+$/.test(value)) throw new CliError(`${JSON.stringify(value)} is not an e-mail address.`);
  return value;
}

/** `--permission`, repeatable: each one a word (no spaces), as KEY_PERMISSION is. */
const collect = (value: string, previous: string[] = []) => {
  if (!/^\S+$/.test(value))
    throw new InvalidArgumentError("--permission is a word without spaces, e.g. vibe.classify.");
  return [...previous, value];
};

/** `--owner`: a user id or an e-mail address, never empty. */
function owner(value: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw new InvalidArgumentError("--owner is a user id or the e-mail an account signed in with.");
  return trimmed;
}

/** An owner given as an e-mail address is the account with that address (the account page's owner id). */
async function resolveOwner(keys: KeyService, owner: string | undefined): Promise<string | null> {
  if (owner === undefined) return null;
  if (!owner.includes("@")) return owner;
  const found = await keys.accounts.plans.userIdFor(owner);
  if (!found) throw new CliError(`no account with e-mail ${owner}: sign in once on /account first, or pass a user id.`);
  return found;
}

/** Runs an admin command over the admin composition; a failure prints `almanac: <message>`, exit status 1. */
async function withAdmin(io: CliIo, loadConfig: () => Config, fn: (admin: AdminDeps) => Promise<void>): Promise<void> {
  let admin: AdminDeps | undefined;
  try {
    admin = await buildAdminDeps(loadConfig(), createLogger("warn"));
    await fn(admin);
  } catch (err) {
    io.stderr(`almanac: ${errorLine(err)}\n`);
    io.exitCode = 1;
  } finally {
    await admin?.close();
  }
}

/** `almanac plans grant|list|show`: the operator's side of plans (features/keys/plans.ts). */
export function registerPlansCommands(program: Command, io: CliIo, loadConfig: () => Config): void {
  const print = (value: unknown) => printJson(io, value);
  const plans = program.command("plans").description(`account plans for self-service keys (${PLAN_NAMES.join(", ")})`);

  const withPlans = (fn: (accountKeys: AdminDeps["keys"]["accounts"]) => Promise<void>) =>
    withAdmin(io, loadConfig, (admin) => fn(admin.keys.accounts));

  plans
    .command("grant <email> <plan>")
    .description("put an account (by e-mail, signed in or not yet) on a plan; its active keys get the plan's limits")
    .action((address: string, plan: string) =>
      withPlans(async (ak) => {
        email(address);
        if (!isPlanName(plan)) throw new CliError(`unknown plan ${plan}: choose ${PLAN_NAMES.join(", ")}`);
        print(await ak.grant(address, plan, "cli"));
      }),
    );

  plans
    .command("list")
    .description("accounts with a granted plan (every other account is on free)")
    .action(() =>
      withPlans(async (ak) => {
        print(await ak.plans.list());
      }),
    );

  plans
    .command("show <email>")
    .description("an account's plan and its limits")
    .action((address: string) =>
      withPlans(async (ak) => {
        const plan = await ak.planOfAccount(email(address));
        print({ email: address.toLowerCase(), ...plan });
      }),
    );
}

/** `almanac keys create|list|update|revoke|roll`: same configuration as the server, safe while it runs. */
export function registerKeysCommands(program: Command, io: CliIo, loadConfig: () => Config): void {
  const print = (value: unknown) => printJson(io, value);
  const keys = program.command("keys").description("manage API keys (embedded store, or Unkey with UNKEY_ROOT_KEY)");

  const withStore = (fn: (admin: AdminDeps) => Promise<void>) => withAdmin(io, loadConfig, fn);

  keys
    .command("create")
    .description("create a key and print it (the plaintext key is shown this once)")
    .requiredOption("--name <name>", "what the key is for (1 to 64 printable characters)", keyName)
    .option("--owner <id-or-email>", "owning account (user id, or the e-mail it signed in with)", owner)
    .option("--permission <permission>", "grant a permission (repeatable; default: KEY_PERMISSION)", collect)
    .option("--expires <iso>", "expiry time, ISO 8601", isoDate)
    .option("--remaining <n>", "number of uses (default: unlimited)", wholeNumber("--remaining", 0, MAX_USES))
    .option("--ratelimit <n/seconds>", "at most N calls per SECONDS", ratelimit)
    .action(
      (opts: {
        name: string;
        owner?: string;
        permission?: string[];
        expires?: string;
        remaining?: number;
        ratelimit?: { limit: number; durationSec: number };
      }) =>
        withStore(async ({ keys: store, config, now }) => {
          if (opts.expires && Date.parse(opts.expires) <= now().getTime()) {
            throw new CliError("--expires is in the past: a key created now would never work.");
          }
          const created = await store.create({
            name: opts.name,
            ownerId: await resolveOwner(store, opts.owner),
            permissions: opts.permission ?? [config.KEY_PERMISSION],
            expiresAt: opts.expires ?? null,
            remaining: opts.remaining ?? null,
            ratelimit: opts.ratelimit ?? null,
          });
          const { key, ...info } = created;
          print({ key, ...info });
        }),
    );

  keys
    .command("list")
    .description("list keys (prefix and last four characters, never the key)")
    .option("--owner <id-or-email>", "only this account's keys", owner)
    .action((opts: { owner?: string }) =>
      withStore(async ({ keys: store }) => {
        const keys = await store.list(opts.owner === undefined ? undefined : await resolveOwner(store, opts.owner));
        // Old → new: each key says which key it replaced in a roll, and which key replaced it.
        print(keys.map((k) => ({ ...k, replacedBy: keys.find((x) => x.replaces === k.id)?.id ?? null })));
      }),
    );

  keys
    .command("revoke <id>")
    .description("revoke a key, and the other key of its roll (old → new) while that one works")
    .option("--only", "revoke only this key, not the other key of its roll")
    .action((id: string, opts: { only?: boolean }) =>
      withStore(async ({ keys: { accounts: ak } }) => {
        const ids = await ak.revoke(undefined, id, { only: opts.only === true });
        if (!ids) throw new CliError(`no key ${id}`);
        print({ id, revoked: true, ...(ids.length > 1 && { alsoRevoked: ids.slice(1) }) });
      }),
    );

  keys
    .command("roll <id>")
    .description("issue a replacement with the same settings (printed once); the old key is revoked")
    .option(
      "--grace <seconds>",
      "keep the old key working this many seconds, at most a year (default 0: revoke now, for a leak)",
      wholeNumber("--grace", 0, MAX_GRACE_SEC),
    )
    .action((id: string, opts: { grace?: number }) =>
      withStore(async ({ keys: { accounts: ak } }) => {
        const rolled = await ak.roll(undefined, id, opts.grace ?? 0);
        if (!rolled.ok) {
          if (rolled.error.kind === "not_found") throw new CliError(`no active key ${id} (or it was rolled already)`);
          throw new CliError(keyRefusalMessage(rolled.error));
        }
        const { key, ...info } = rolled.value;
        print({ key, ...info, replaces: id });
      }),
    );

  keys
    .command("update <id>")
    .description("change a key; an account's key stays within its plan (shared uses and rate limit apply too)")
    .option("--name <name>", "new name (1 to 64 printable characters)", keyName)
    .option("--expires <iso|never>", "new expiry, ISO 8601, or never", orClear(isoDate))
    .option("--remaining <n|unlimited>", "uses of the key's own", orClear(uses))
    .option("--ratelimit <n/seconds|none>", "at most N calls per SECONDS for this key", orClear(ratelimit))
    .option("--permission <permission>", "the key's permissions (repeatable; replaces them all)", collect)
    .option("--no-permissions", "remove every permission (a lookups-only key)")
    .action(
      (
        id: string,
        opts: {
          name?: string;
          expires?: Cleared<string>;
          remaining?: Cleared<number>;
          ratelimit?: Cleared<{ limit: number; durationSec: number }>;
          permission?: string[];
          permissions?: boolean;
        },
      ) =>
        withStore(async ({ keys: { accounts: ak } }) => {
          if (opts.permission !== undefined && opts.permissions === false) {
            throw new CliError("give --permission or --no-permissions, not both.");
          }
          const patch = {
            ...(opts.name !== undefined && { name: opts.name }),
            ...(opts.expires && { expiresAt: opts.expires.to }),
            ...(opts.remaining && { remaining: opts.remaining.to }),
            ...(opts.ratelimit && { ratelimit: opts.ratelimit.to }),
            ...(opts.permission !== undefined && { permissions: opts.permission }),
            ...(opts.permissions === false && { permissions: [] }),
          };
          if (Object.keys(patch).length === 0) throw new CliError("nothing to change: give at least one option.");
          const updated = await ak.update(undefined, id, patch);
          if (!updated.ok) {
            throw new CliError(updated.error.kind === "not_found" ? `no key ${id}` : keyRefusalMessage(updated.error));
          }
          print(updated.value);
        }),
    );
}
