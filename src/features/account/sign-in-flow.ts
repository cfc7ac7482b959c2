import type { Context } from "hono";
import { deleteCookie, getSignedCookie, setSignedCookie } from "hono/cookie";
import type { AppEnv } from "../../http/types.js";
import { isPlanName, type PlanName } from "../keys/index.js";

/**
 * A paid plan the person chose before signing in (`?buy=pro` from the home page's Buy button),
 * or undefined: only a plan's name passes, so it can only ever lead to that plan's checkout.
 */
export function chosenPlan(value: unknown): Exclude<PlanName, "free"> | undefined {
  return isPlanName(value) && value !== "free" ? value : undefined;
}

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
  /** The paid plan to check out once signed in (chosenPlan). */
  buy?: Exclude<PlanName, "free">;
}

const COOKIE = "almanac.signin";
const MAX_AGE_SEC = 600;

export async function readPendingSignIn(c: Context<AppEnv>, secret: string): Promise<PendingSignIn | null> {
  const value = await getSignedCookie(c, secret, COOKIE);
  if (!value) return null;
  try {
    const p = JSON.parse(value) as PendingSignIn;
    if (typeof p.email !== "string" || !Number.isInteger(p.left)) return null;
    const { buy, ...rest } = p;
    return chosenPlan(buy) ? { ...rest, buy } : rest;
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
