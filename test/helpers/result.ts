import type { Result } from "../../src/lib/result.js";

/** The value of a result a test expects to succeed; a failure throws, naming its kind. */
export function expectValue<T>(r: Result<T, { kind: string }>): T {
  if (!r.ok) throw new Error(`expected a value, got the failure ${JSON.stringify(r.error)}`);
  return r.value;
}
