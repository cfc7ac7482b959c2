import type { UpstreamFailureKind } from "./upstream-error.js";

/**
 * A key → JSON value store with per-entry expiry (in-process LRU, or Redis shared between
 * instances). Values must survive JSON round-trips; callers treat them as immutable.
 */
export interface Cache {
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
  /** Present on a cache shared between instances: one load per key at a time across all of them. */
  readonly flights?: Flights;
}

/** How a shared load failed, for the instances that waited on it. */
export interface FlightFailure {
  upstream: string;
  kind: UpstreamFailureKind;
}

export type FlightState = "running" | "over" | { failed: FlightFailure };

/**
 * Loads of one key claimed across instances: the claimer loads, the others wait for its value in
 * the cache (or its failure). A claim lapses by itself after a lease, so a crashed loader holds no
 * one up for longer. When the store is unreachable every claim is granted (each process loads).
 */
export interface Flights {
  /** `leader` when this caller is to load; otherwise the token of the load under way. */
  claim(key: string): Promise<{ leader: boolean; token: string }>;
  /** Where the load `token` of `key` stands. */
  state(key: string, token: string): Promise<FlightState>;
  /** Ends the caller's load: the waiters read the value from the cache, or fail with `failure`. */
  finish(key: string, token: string, failure?: FlightFailure): Promise<void>;
}
