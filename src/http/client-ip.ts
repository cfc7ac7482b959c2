import type { IncomingMessage } from "node:http";
import type { Context } from "hono";

/**
 * The client address: the socket peer, unless `trustProxy` hops are trusted, in which case the
 * address that many hops back along X-Forwarded-For (the rightmost entries are the nearest proxies).
 */
export function clientIp(c: Context, trustProxy: number): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return clientIpOf(incoming?.socket.remoteAddress, c.req.header("x-forwarded-for"), trustProxy);
}

/** The same from the socket's peer address and the X-Forwarded-For header (the hot lane has no Context). */
export function clientIpOf(remoteAddress: string | undefined, forwardedFor: string | undefined, trustProxy: number) {
  const peer = normalise(remoteAddress ?? "unknown");
  if (trustProxy <= 0) return peer;
  const forwarded = (forwardedFor ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const chain = [...forwarded, peer];
  return normalise(chain[Math.max(0, chain.length - 1 - trustProxy)] ?? peer);
}

function normalise(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}
