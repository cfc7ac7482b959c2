import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * A state-changing request is accepted only when the browser says it is same-origin:
 * `Sec-Fetch-Site: same-origin` when sent, and `Origin` equal to the public origin when sent.
 * At least one of the two must be present (every current browser sends both on a form POST).
 */
export function isSameOriginRequest(headers: Headers, publicOrigin: string): boolean {
  const site = headers.get("sec-fetch-site");
  const origin = headers.get("origin");
  if (site === null && origin === null) return false;
  if (site !== null && site !== "same-origin") return false;
  if (origin !== null && origin !== publicOrigin) return false;
  return true;
}

/** Per-session form token: an HMAC of the session id, so it needs no storage and dies with the session. */
export function csrfToken(secret: string, sessionId: string): string {
  return createHmac("sha256", secret).update(`account-csrf:${sessionId}`).digest("base64url");
}

export function csrfTokenValid(secret: string, sessionId: string, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const want = Buffer.from(csrfToken(secret, sessionId));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}
