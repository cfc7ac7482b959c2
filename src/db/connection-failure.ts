/**
 * Socket errors, PostgreSQL's "cannot serve now" classes (08 connection, 57P admin shutdown,
 * 53300 too many connections, 25006 a write reaching a read-only standby: the primary has moved)
 * and SQLite's busy/locked (another process held the file past busy_timeout).
 */
const CONNECTION_CODES =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|08\w{3}|57P0[123]|53300|25006|SQLITE_BUSY\w*|SQLITE_LOCKED\w*)$/;

/** SQLSTATE of a write refused by a read-only server: a standby, or a primary being demoted. */
export const READ_ONLY_SERVER = "25006";
const CONNECTION_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Query read timeout)$/;

/**
 * A dependency the request needs (the database, in practice) could not be reached: anywhere in
 * the cause chain, a socket error code, a PostgreSQL connection-class SQLSTATE, or pg's own messages.
 */
export function isConnectionFailure(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 5) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_CODES.test(code)) return true;
  if (CONNECTION_MESSAGES.test(err.message)) return true;
  if (err instanceof AggregateError && err.errors.some((e) => isConnectionFailure(e, depth + 1))) return true;
  return isConnectionFailure(err.cause, depth + 1);
}
