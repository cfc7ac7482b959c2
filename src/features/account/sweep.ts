import type { Expiry } from "../../db/expired-rows.js";

/**
 * The sign-in rows better-auth leaves behind once they have expired: the OAuth state of a sign-in
 * or link the browser never came back from (10 minutes), e-mail codes never tried (10 minutes),
 * and sessions never presented again after their 7 days. better-auth deletes such a row only when
 * it meets it (a state or code when its callback or check arrives, a session when its cookie
 * does), and its own clean-up of expired states rode on the next OAuth callback's request (turned
 * off: `verification.disableCleanup`); the expired-rows sweep (db/expired-rows.ts) deletes them.
 */
export const AUTH_EXPIRIES: readonly Expiry[] = [
  { name: "verifications", table: "auth_verification", column: "expiresAt", keepMs: 0 },
  { name: "sessions", table: "auth_session", column: "expiresAt", keepMs: 0 },
];
