import pino from "pino";
import { EmbeddedKeyStore } from "../../src/adapters/keys/embedded.js";
import { openDatabase } from "../../src/db/database.js";
import { AccountQuotas } from "../../src/features/keys/account-quota.js";
import type { KeyStore, KeyVerifier } from "../../src/ports/key-store.js";
import { FakeUnkey } from "../fakes/unkey.js";
import { keysOver, type TestApp, testApp } from "./app.js";

export const PERMISSION = "vibe.classify";

export interface Harness {
  name: "embedded" | "unkey";
  t: TestApp;
  keys: KeyStore;
  /** Present for the Unkey harness. */
  unkey?: FakeUnkey;
  /** Makes the key verifier unavailable; `up` restores it. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The embedded store; "down" sends every verification (and refund) to the same store over a
 * PostgreSQL that refuses connections. The switch sits in front of the composed verification path,
 * so every route that verifies a key (the demo tier's keyed GETs too) meets the outage.
 */
export async function embeddedHarness(env: Record<string, string> = {}): Promise<Harness> {
  const unreachable = openDatabase({
    dataDir: "",
    databaseUrl: "postgres://almanac@127.0.0.1:1/almanac",
    logger: pino({ level: "silent" }),
  });
  let verifier: KeyVerifier | undefined;
  let down: KeyVerifier | undefined;
  let isDown = false;
  const current = () => (isDown ? down : verifier) as KeyVerifier;
  const t = await testApp(env, (built) => {
    verifier = built.keys;
    down = new EmbeddedKeyStore(unreachable.db, built.limiter, new AccountQuotas(unreachable.db));
    return {
      keys: keysOver(built, {
        verify: (key, permission, opts) => current().verify(key, permission, opts),
        refund: (id, uses, refund) => current().refund(id, uses, refund),
      }),
    };
  });
  return {
    name: "embedded",
    t,
    keys: t.deps.keys,
    down: async () => {
      isDown = true;
    },
    up: async () => {
      isDown = false;
    },
    close: async () => {
      await unreachable.close();
      await t.close();
    },
  };
}

/** The Unkey store against a fake Unkey; "down" makes the fake refuse connections. */
export async function unkeyHarness(env: Record<string, string> = {}): Promise<Harness> {
  const unkey = await new FakeUnkey().start();
  const t = await testApp({
    UNKEY_ROOT_KEY: unkey.rootKey,
    UNKEY_API_ID: unkey.apiId,
    UNKEY_BASE_URL: unkey.url,
    // Long enough for a cold first call on a loaded 2-core CI host; the hang tests wait it out.
    UNKEY_TIMEOUT_MS: "1500",
    ...env,
  });
  return {
    name: "unkey",
    t,
    keys: t.deps.keys,
    unkey,
    down: () => unkey.refuse(),
    up: async () => {
      await unkey.start();
    },
    close: async () => {
      await t.close();
      await unkey.close();
    },
  };
}

export function classify(
  t: TestApp,
  body: unknown,
  headers: Record<string, string> = {},
): Response | Promise<Response> {
  return t.app.request("/v1/vibe/classify", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Looks at `fn` every 50 ms until `ok` holds or `ms` passes; returns the last value (assert on it). */
export async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await fn();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    v = await fn();
  }
  return v;
}

/** A key's remaining uses, as its store reports them. */
export async function remainingOf(keys: KeyStore, id: string): Promise<number | null | undefined> {
  return (await keys.list()).find((k) => k.id === id)?.remaining;
}
