import type { KeyStore } from "./key-store.js";

/**
 * The parts of the key service that are the keys feature's own domain: self-service keys under
 * plans (`accounts`) and usage counts (`usage`). Declared empty here and filled in by the keys
 * feature (features/keys/service.ts, by declaration merging), so that this port, and AppDeps
 * over it, import nothing from a feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by the keys feature (declaration merging)
export interface KeyServiceDomain {}

/**
 * The key service as the app holds it (AppDeps.keys): the hot path (`verify`, which spends, and
 * `refund`), the operator's operations on stored keys (`create`, `list`, `revoke`, `roll`,
 * `update`), the storage adapter under them (`storage`), and the feature's own parts
 * (KeyServiceDomain). Implemented by features/keys/service.ts.
 */
export interface KeyServicePort extends KeyStore, KeyServiceDomain {
  readonly storage: KeyStore;
}
