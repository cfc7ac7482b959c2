import type { Context } from "hono";
import { deleteCookie, getSignedCookie, setSignedCookie } from "hono/cookie";
import type { AppEnv } from "../../http/types.js";

/**
 * A sign-in in progress between the page's POSTs and the GET after each redirect
 * (Post/Redirect/Get): which address the code went to, how many tries the code has left, and
 * what to tell the user once. HMAC-signed (AUTH_SECRET), HttpOnly, SameSite=Strict, 10 minutes
 * like the code. A reload of the page after "send me a code" therefore never sends another.
 */
export interface PendingSignIn {
  email: string;
  /** Tries left for the code; 0: the code is dead (expired or tried too often), the address stays filled in. */
  left: number;
  notice?: "wrong" | "resent" | "expired" | "too_many";
}

const COOKIE = "almanac.signin";
const MAX_AGE_SEC = 600;

export async function readPendingSignIn(c: Context<AppEnv>, secret: string): Promise<PendingSignIn | null> {
  const value = await getSignedCookie(c, secret, COOKIE);
  if (!value) return null;
  try {
    const p = JSON.parse(value) as PendingSignIn;
    return typeof p.email === "string" && Number.isInteger(p.left) ? p : null;
  } catch {
    return null;
  }
}

export async function setPendingSignIn(c: Context<AppEnv>, secret: string, p: PendingSignIn, secure: boolean) {
  await setSignedCookie(c, COOKIE, JSON.stringify(p), secret, {
    path: "/account",
    httpOnly: true,
    sameSite: "Strict",
    secure,
    maxAge: MAX_AGE_SEC,
  });
}

export function clearPendingSignIn(c: Context<AppEnv>, secure: boolean) {
  deleteCookie(c, COOKIE, { path: "/account", secure });
}
