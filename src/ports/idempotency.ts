/** What an `Idempotency-Key` claim finds. */
export type IdempotencyBegin =
  | { kind: "new" }
  | { kind: "replay"; status: number; body: string }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

/**
 * Stored `Idempotency-Key` outcomes, shared by every instance. `begin` claims a key atomically;
 * the request that claimed it `complete`s it with its answer or `abandon`s it after a failure.
 */
export interface IdempotencyStore {
  begin(scope: string, key: string, bodyHash: string): Promise<IdempotencyBegin>;
  /** What a claim would find, without claiming (null: nothing stored). */
  peek(scope: string, key: string, bodyHash: string): Promise<Exclude<IdempotencyBegin, { kind: "new" }> | null>;
  complete(scope: string, key: string, status: number, body: string): Promise<void>;
  abandon(scope: string, key: string): Promise<void>;
}
