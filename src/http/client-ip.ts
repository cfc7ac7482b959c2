import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
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
 * anything further left was written by the client and is never trusted beyond that count).
 */
export function clientOf(
  remoteAddress: string | undefined,
  header: (name: string) => string | undefined,
  how: ClientAddressing,
): Client {
  const peer = remoteAddress ?? "unknown";
  if (how.hops === 0) return addressed(peer, how.v6Prefix);
  const value = header(how.header) ?? "";
  const chain = [...(how.header === "forwarded" ? forwardedFor(value) : listOf(value)), peer];
  return addressed(withoutPort(chain[Math.max(0, chain.length - 1 - how.hops)] ?? peer), how.v6Prefix);
}

/** The client at `address`: IPv4-mapped IPv6 as IPv4, counted by its network (see networkOf). */
function addressed(address: string, v6Prefix: number): Client {
  if (!address.includes(":")) return { ip: address, key: address };
  const groups = hexGroups(address);
  if (!groups) {
    const ip = normalise(address);
    return { ip, key: networkOf(ip, v6Prefix) };
  }
  const ip = mappedIpv4(groups) ?? address;
  return { ip, key: ip === address ? networkOfGroups(address, groups, v6Prefix) : ip };
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
  if (!ip.includes(":") || v6Prefix >= 128) return ip;
  const groups = hexGroups(ip);
  if (groups) return networkOfGroups(ip, groups, v6Prefix);
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${ip.replace(/%.*$/, "")}/${v6Prefix}`);
  return `${network.toString()}/${v6Prefix}`;
}

const networkOfGroups = (ip: string, groups: number[], v6Prefix: number): string =>
  v6Prefix >= 128 ? ip : `${rfc5952(masked(groups, v6Prefix))}/${v6Prefix}`;

/** IPv4-mapped IPv6 (`::ffff:192.0.2.1`, any spelling) is the IPv4 address it maps. */
function normalise(ip: string): string {
  if (ip.startsWith("::ffff:") && !ip.slice(7).includes(":")) return ip.slice(7);
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  const v6 = ipaddr.IPv6.parse(ip);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : ip;
}

/** `::ffff:a.b.c.d` in groups, as `a.b.c.d`; undefined for any other address. */
function mappedIpv4(g: number[]): string | undefined {
  if (g[0] !== 0 || g[1] !== 0 || g[2] !== 0 || g[3] !== 0 || g[4] !== 0 || g[5] !== 0xffff) return undefined;
  const [hi = 0, lo = 0] = [g[6], g[7]];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/*
 * The hex-only spellings of IPv6 (what sockets and proxies write) read by hand in one pass:
 * ipaddr.js took ~10 µs per request for them (three parses and a format). Anything else (a dotted
 * IPv4 tail, a zone, junk) goes to ipaddr.js; test/clients/ipv6-clients.test.ts holds both to the
 * same keys.
 */
const COLON = 58;

/** A hex digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** The eight 16-bit groups of a hex-only IPv6 address, or undefined when `ip` is not one. */
function hexGroups(ip: string): number[] | undefined {
  const n = ip.length;
  if (n < 2 || n > 39) return undefined;
  const head: number[] = [];
  const tail: number[] = [];
  let part = head;
  let i = 0;
  if (ip.charCodeAt(0) === COLON) {
    if (ip.charCodeAt(1) !== COLON) return undefined;
    part = tail;
    i = 2;
  }
  while (i < n) {
    let value = 0;
    let digits = 0;
    for (let h = hexValue(ip.charCodeAt(i)); h >= 0 && i < n; h = hexValue(ip.charCodeAt(i))) {
      value = value * 16 + h;
      i++;
      if (++digits > 4) return undefined;
    }
    if (digits === 0) return undefined;
    part.push(value);
    if (i === n) break;
    if (ip.charCodeAt(i) !== COLON || ++i === n) return undefined;
    if (ip.charCodeAt(i) === COLON) {
      if (part === tail) return undefined;
      part = tail;
      i++;
    }
  }
  const gap = part === tail;
  if (gap ? head.length + tail.length > 7 : head.length !== 8) return undefined;
  const groups = head.concat(new Array<number>(8 - head.length - tail.length).fill(0), tail);
  return groups;
}

/** The first `prefix` bits of the groups, the rest zero. */
const masked = (groups: number[], prefix: number): number[] =>
  groups.map((g, i) => {
    const bits = Math.min(16, Math.max(0, prefix - 16 * i));
    return g & ((0xffff << (16 - bits)) & 0xffff);
  });

/** RFC 5952 text, as ipaddr.js writes it: lower case, the first longest run of ≥ 2 zero groups as `::`. */
function rfc5952(groups: number[]): string {
  let start = -1;
  let length = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > length) [start, length] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(":");
  return start < 0 ? hex(groups) : `${hex(groups.slice(0, start))}::${hex(groups.slice(start + length))}`;
}
