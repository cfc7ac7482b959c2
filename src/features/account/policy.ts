/** The parts of sign-in policy that do not need better-auth loaded (cookies, codes, headers). */

/** Header our own middleware sets to the resolved client IP (any client value is replaced). */
export const CLIENT_IP_HEADER = "x-almanac-client-ip";

export const OTP_EXPIRES_SEC = 600;
export const OTP_ALLOWED_ATTEMPTS = 3;

/**
 * How recent a sign-in must be to add or remove a linked identity (better-auth's `freshAge`,
 * which it applies to unlinking; the link route applies it too).
 */
export const SESSION_FRESH_SEC = 24 * 3600;

/**
 * Cookie policy. On https: `__Host-almanac.*`, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain.
 * On plain http (localhost development) browsers refuse `__Host-`/Secure cookies, so the nearest
 * safe setting is `almanac.*`, HttpOnly, SameSite=Lax, Path=/ without Secure.
 */
export function cookiePolicy(publicUrl: string): { prefix: string; secure: boolean } {
  const secure = publicUrl.startsWith("https://");
  return { prefix: secure ? "__Host-almanac" : "almanac", secure };
}

export function sessionCookieName(publicUrl: string): string {
  return `${cookiePolicy(publicUrl).prefix}.session_token`;
}
