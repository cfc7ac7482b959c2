import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Context } from "hono";
import ipaddr from "ipaddr.js";
import type { Config } from "../config.js";

/**
 * How a request's client is told: `hops` trusted proxies (TRUST_PROXY), the header they write
 * (FORWARDED_HEADER: `x-forwarded-for`, or RFC 7239 `forwarded`), and the IPv6 prefix length that
 * per-client limits count by (CLIENT_IPV6_PREFIX).
 */
export interface ClientAddressing {
  hops: number;
  header: "x-forwarded-for" | "forwarded";
  v6Prefix: number;
}

export const clientAddressing = (config: Config): ClientAddressing => ({
  hops: config.TRUST_PROXY,
  header: config.FORWARDED_HEADER,
  v6Prefix: config.CLIENT_IPV6_PREFIX,
});

/** Who sent a request: the address (logged) and the network its limits count by. */
export interface Client {
  ip: string;
  key: string;
}

/** The client of a Hono request (see clientOf). */
export function client(c: Context, how: ClientAddressing): Client {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return clientOf(incoming?.socket.remoteAddress, (name) => c.req.header(name), how);
}

/** The client of a raw node:http request (the hot lane has no Context). */
export function clientOfIncoming(req: IncomingMessage, how: ClientAddressing): Client {
  const headers: IncomingHttpHeaders = req.headers;
  return clientOf(req.socket.remoteAddress, (name) => headers[name] as string | undefined, how);
}

/**
 * The client address is the socket peer, unless `hops` proxies are trusted: then it is the address
 * that many hops back along the proxies' header (its rightmost entries are the nearest proxies;
 * anything further left was written by the client and is never trusted beyond that count). A
 * node there that is no address (`unknown`, `_hidden`, any token) names nobody: the request counts
 * against the nearest address after it, down to the connecting peer, so inventing tokens does
 * not buy a client budget after budget.
 */
export function clientOf(
  remoteAddress: string | undefined,
  header: (name: string) => string | undefined,
  how: ClientAddressing,
): Client {
  const peer = remoteAddress ?? "unknown";
  if (how.hops === 0) return addressed(peer, how.v6Prefix);
  const value = header(how.header) ?? "";
  const chain = how.header === "forwarded" ? forwardedFor(value) : listOf(value);
  for (let i = Math.max(0, chain.length - how.hops); i < chain.length; i++) {
    const node = withoutPort(chain[i] as string);
    if (isIP(node) !== 0) return addressed(node, how.v6Prefix);
  }
  return addressed(peer, how.v6Prefix);
}

/** The client at `address`: IPv4-mapped IPv6 as IPv4, counted by its network (see networkOf). */
function addressed(address: string, v6Prefix: number): Client {
  const v6 = address.includes(":") ? parsedIpv6(address) : undefined;
  if (!v6) return { ip: address, key: address };
  if (v6.isIPv4MappedAddress()) {
    const ip = v6.toIPv4Address().toString();
    return { ip, key: ip };
  }
  return { ip: address, key: networkKey(address, v6, v6Prefix) };
}

const listOf = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The `for=` node of each element of an RFC 7239 `Forwarded` header, in order, without quotes,
 * brackets or port: `for=192.0.2.60`, `for="[2001:db8:cafe::17]:4711"` → `2001:db8:cafe::17`.
 * An element without `for=`, or an obfuscated node (`unknown`, `_hidden`), keeps its place as is.
 */
export function forwardedFor(value: string): string[] {
  return listOf(value).map((element) => {
    const pair = element
      .split(";")
      .map((p) => p.trim())
      .find((p) => p.toLowerCase().startsWith("for="));
    return withoutPort((pair?.slice(4) ?? "unknown").replace(/^"(.*)"$/, "$1"));
  });
}

/**
 * A node's address without brackets or port: `[2001:db8::17]:4711` → `2001:db8::17`,
 * `192.0.2.60:80` → `192.0.2.60`. Some load balancers write X-Forwarded-For entries so too; a
 * new port is a new connection, not a new client.
 */
function withoutPort(node: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(node);
  if (bracketed?.[1]) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(node);
  return v4WithPort?.[1] ?? node;
}

/**
 * What per-client limits count by: an IPv4 address as it is, an IPv6 address by its network of
 * `v6Prefix` bits (`2001:db8:1:2::/64`: a customer holds at least a /64, so counting single
 * addresses would let them step round every limit). Anything unparseable counts as itself.
 */
export function networkOf(ip: string, v6Prefix: number): string {
  const v6 = ip.includes(":") ? parsedIpv6(ip) : undefined;
  return v6 ? networkKey(ip, v6, v6Prefix) : ip;
}

/** One parse per request (ipaddr.js, which throws on anything that is not an IPv6 address). */
function parsedIpv6(ip: string): ipaddr.IPv6 | undefined {
  try {
    return ipaddr.IPv6.parse(ip);
  } catch {
    return undefined;
  }
}

/** `ip`'s first `prefix` bits as an RFC 5952 network (`2001:db8:1:2::/64`); `ip` itself at /128. */
function networkKey(ip: string, v6: ipaddr.IPv6, prefix: number): string {
  if (prefix >= 128) return ip;
  const parts = v6.parts.map(
    (group, i) => group & (0xffff << (16 - Math.min(16, Math.max(0, prefix - 16 * i)))) & 0xffff,
  );
  return `${new ipaddr.IPv6(parts).toRFC5952String()}/${prefix}`;
}
