import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { generateCookie, getCookie } from "hono/cookie";
import type { AppEnv } from "../../http/types.js";
import { cookiePolicy } from "./policy.js";
import { normaliseAddress } from "./sign-in-limits.js";

/**
 * "This browser has signed in as X before": a cookie set at each successful code sign-in, holding
 * for each address (at most MAX_ADDRESSES, newest first) an HMAC of the normalised address under
 * AUTH_SECRET. Nothing in it can be read back into an address, and without AUTH_SECRET no one can
 * make a tag for an address they have never signed in as. It lets a browser keep a reserve of
 * sign-in codes when someone else has spent the address's budget (sign-in-limits.ts).
 */
const MAX_ADDRESSES = 5;
const MAX_AGE_SEC = 365 * 86_400;
/** 128 bits of HMAC-SHA256, base64url. */
const TAG_CHARS = 22;
const TAG = new RegExp(`^[\\w-]{${TAG_CHARS}}$`);

export const knownBrowserCookieName = (publicUrl: string) => `${cookiePolicy(publicUrl).prefix}.known`;

function tagFor(secret: string, address: string): string {
  return createHmac("sha256", secret)
    .update(`known-browser\0${normaliseAddress(address)}`)
    .digest("base64url")
    .slice(0, TAG_CHARS);
}

function tagsIn(c: Context<AppEnv>, publicUrl: string): string[] {
  return (getCookie(c, knownBrowserCookieName(publicUrl)) ?? "").split(".").filter((t) => TAG.test(t));
}

/** Whether the request's browser completed a sign-in for `address` before. */
export function isKnownBrowser(c: Context<AppEnv>, publicUrl: string, secret: string, address: string): boolean {
  const want = Buffer.from(tagFor(secret, address));
  return tagsIn(c, publicUrl).some((t) => timingSafeEqual(Buffer.from(t), want));
}

/** The Set-Cookie header that adds `address` to the browser's known addresses (HttpOnly, SameSite=Strict). */
export function knownBrowserCookie(c: Context<AppEnv>, publicUrl: string, secret: string, address: string): string {
  const tag = tagFor(secret, address);
  const tags = [tag, ...tagsIn(c, publicUrl).filter((t) => t !== tag)].slice(0, MAX_ADDRESSES);
  return generateCookie(knownBrowserCookieName(publicUrl), tags.join("."), {
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    secure: cookiePolicy(publicUrl).secure,
    maxAge: MAX_AGE_SEC,
  });
}
