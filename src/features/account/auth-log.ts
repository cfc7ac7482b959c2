import { isAPIError } from "better-auth/api";
import type { Logger } from "pino";

type Level = "debug" | "info" | "warn" | "error";

/**
 * better-auth's own warn/error lines that report what a request got wrong (a foreign origin or
 * callback URL, a missing or stale OAuth state, an unknown provider), not what the server did:
 * anyone can produce them at will, so they are logged at info and never page an operator.
 */
const CLIENT_FAULTS: RegExp[] = [
  /^Invalid (origin|callbackURL|redirectURL|errorCallbackURL|newUserCallbackURL): /,
  /^Blocked cross-site navigation login attempt/,
  /^INVALID_CALLBACK_REQUEST$/,
  /^State not found$/,
  /^Code not found$/,
  /^OAuth provider not found$/,
  /^Provider not found\b/,
  /^Provider does not support id token verification$/,
  /^Invalid id token$/,
  /^OAuth issuer mismatch$/,
];

/**
 * "Failed to parse state" is the client's when better-auth itself refused the state (its
 * StateError, a BetterAuthError: stale, foreign or replayed), the server's when the store failed.
 */
function isClientFault(message: string, cause: unknown): boolean {
  if (message === "Failed to parse state") return (cause as Error | undefined)?.name === "BetterAuthError";
  return CLIENT_FAULTS.some((re) => re.test(message));
}

/**
 * better-auth's `logger` and `onAPIError` options: its lines go to our logger (and LOG_LEVEL),
 * client faults below warn, server faults at error with their cause.
 */
export function authLogging(logger: Logger) {
  return {
    logger: {
      level: "warn" as const,
      log: (level: Level, message: string, ...args: unknown[]) => {
        const cause = args[0];
        const at = level === "warn" || level === "error" ? (isClientFault(message, cause) ? "info" : level) : level;
        logger[at]({ lib: "better-auth", ...(cause instanceof Error && { err: cause }) }, message);
      },
    },
    // Without this hook better-auth prints every refused request (each 4xx) to the console,
    // bypassing `logger` and LOG_LEVEL; client errors are answers, only server errors are logged.
    // isAPIError, not instanceof: a 415 is thrown by better-call's own APIError class.
    onAPIError: {
      onError: (err: unknown) => {
        if (isAPIError(err) && err.statusCode < 500) return;
        logger.error({ lib: "better-auth", err }, "better-auth request failed");
      },
    },
  };
}
