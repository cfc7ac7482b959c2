import type { Config } from "../../config.js";
import type { Database } from "../../db/database.js";
import type { KeyStore } from "../../ports/key-store.js";
import type { RateLimiter } from "../../ports/rate-limiter.js";
import { EmbeddedKeyStore, type PoolUses } from "./embedded.js";
import { UnkeyKeyStore } from "./unkey.js";

/**
 * Unkey when UNKEY_ROOT_KEY is set, else the embedded store in the project's database, which
 * spends account-page keys' pools (`pools`) with their own uses.
 */
export function createKeyStore(config: Config, database: Database, limiter: RateLimiter, pools: PoolUses): KeyStore {
  if (config.UNKEY_ROOT_KEY) {
    return new UnkeyKeyStore({
      baseUrl: config.UNKEY_BASE_URL,
      rootKey: config.UNKEY_ROOT_KEY,
      apiId: config.UNKEY_API_ID,
      timeoutMs: config.UNKEY_TIMEOUT_MS,
      maxBytes: config.UPSTREAM_MAX_BYTES,
    });
  }
  return new EmbeddedKeyStore(database.db, limiter, pools);
}
