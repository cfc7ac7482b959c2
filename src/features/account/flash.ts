import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../../http/types.js";

/** A new key on its way from a POST to the page after the redirect (Post/Redirect/Get). */
export interface KeyFlash {
  id: string;
  name: string;
  key: string;
  /** `created` or `rolled`. */
  kind: "created" | "rolled";
}

const COOKIE = "almanac.key_flash";
const MAX_AGE_SEC = 300;

const keyOf = (secret: string) => createHash("sha256").update(`account-key-flash:${secret}`).digest();

/**
 * The plaintext key crosses the redirect in an AES-256-GCM encrypted, HttpOnly cookie bound to
 * the session, readable once: the page that shows it deletes it, so a reload shows the key no
 * more (and never creates another).
 */
export function setKeyFlash(c: Context<AppEnv>, secret: string, sessionId: string, flash: KeyFlash, secure: boolean) {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv);
  cipher.setAAD(Buffer.from(sessionId));
  const body = Buffer.concat([cipher.update(JSON.stringify(flash), "utf8"), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  setCookie(c, COOKIE, value, { path: "/account", httpOnly: true, sameSite: "Strict", secure, maxAge: MAX_AGE_SEC });
}

/** Reads and deletes the flash; null when absent, expired, tampered with or from another session. */
export function takeKeyFlash(c: Context<AppEnv>, secret: string, sessionId: string, secure: boolean): KeyFlash | null {
  const value = getCookie(c, COOKIE);
  if (value === undefined) return null;
  setCookie(c, COOKIE, "", { path: "/account", httpOnly: true, sameSite: "Strict", secure, maxAge: 0 });
  try {
    const raw = Buffer.from(value, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(sessionId));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    const parsed = JSON.parse(text) as KeyFlash;
    return typeof parsed.key === "string" && typeof parsed.id === "string" ? parsed : null;
  } catch {
    return null;
  }
}
