/**
 * A value or a typed failure. Domain code returns expected failures as values (a discriminated
 * union in `error`) instead of throwing; the HTTP routes and the CLI map them to their answers.
 */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const fail = <E>(error: E): { ok: false; error: E } => ({ ok: false, error });
