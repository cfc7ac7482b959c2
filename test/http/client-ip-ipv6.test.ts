import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { clientOf, forwardedFor, networkOf } from "../../src/http/client-ip.js";
import { type TestApp, type TestServer, testApp, testServer } from "../helpers/app.js";
import { canRun } from "../helpers/env.js";

/** Per-client limits count an IPv6 client by its network, not by one of its 2^64 addresses. */
const PATH = "/v1/moon?date=2024-01-25";

describe("networkOf and forwardedFor", () => {
  it.each([
    ["2001:db8:1:2::1", 64, "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:0000:0000:0000:0009", 64, "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", 48, "2001:db8:1::/48"],
    ["2001:db8:1:2::1", 128, "2001:db8:1:2::1"],
    ["fe80::1%lo", 64, "fe80::/64"],
    ["198.51.100.7", 64, "198.51.100.7"],
    ["unknown", 64, "unknown"],
  ])("%s /%i counts as %s", (ip, prefix, key) => {
    expect(networkOf(ip, prefix)).toBe(key);
  });

  /** Any IPv6 address (zero runs likely), spelled in any of the ways RFC 4291 allows. */
  const spelled = fc
    .tuple(
      fc.array(fc.oneof(fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff })), {
        minLength: 8,
        maxLength: 8,
      }),
      fc.constantFrom("short", "padded", "upper", "compressed"),
    )
    .map(([groups, how]) => {
      const hex = groups.map((g) => (how === "padded" ? g.toString(16).padStart(4, "0") : g.toString(16)));
      const full = hex.join(":");
      if (how === "upper") return full.toUpperCase();
      if (how !== "compressed") return full;
      return ipaddr.IPv6.parse(full).toString();
    });
  const reference = (ip: string, prefix: number) => {
    const v6 = ipaddr.IPv6.parse(ip);
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    return prefix >= 128 ? ip : `${ipaddr.IPv6.networkAddressFromCIDR(`${ip}/${prefix}`).toString()}/${prefix}`;
  };

  it("counts every spelling of an address as ipaddr.js reads it, for every prefix 48–128", () => {
    fc.assert(
      fc.property(spelled, fc.integer({ min: 48, max: 128 }), (ip, prefix) => {
        const how = { hops: 1, header: "x-forwarded-for", v6Prefix: prefix } as const;
        const v6 = ipaddr.IPv6.parse(ip);
        const logged = v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : ip;
        expect(clientOf("127.0.0.1", () => ip, how)).toEqual({ ip: logged, key: reference(ip, prefix) });
        expect(clientOf(ip, () => undefined, { ...how, hops: 0 })).toEqual({ ip: logged, key: reference(ip, prefix) });
      }),
      { numRuns: 5_000, seed: 2511 },
    );
  });

  it.each([
    ":::",
    "1::2::3",
    "1:2:3:4:5:6:7:8:9",
    "12345::",
    "g::1",
    "1:2:3:4:5:6:7:8::",
    "::1:2:3:4:5:6:7:8",
    ":1::",
    "1:2:3:4::5:6:7:8",
    "1:",
    "1::2:",
    "::1::",
    "1:2:3:4:5:6:7",
  ])("%s is no IPv6 address: it counts against the connecting peer", (junk) => {
    expect(ipaddr.IPv6.isValid(junk)).toBe(false);
    expect(clientOf("127.0.0.1", () => junk, { hops: 1, header: "x-forwarded-for", v6Prefix: 64 }).key).toBe(
      "127.0.0.1",
    );
  });

  it.each([
    ["forwarded", "for=_hidden"],
    ["forwarded", "for=unknown"],
    ["forwarded", 'for="_gazonk"'],
    ["forwarded", "proto=https"],
    ["x-forwarded-for", "unknown"],
    ["x-forwarded-for", "any-token-at-all"],
    ["x-forwarded-for", "01.2.3.4"],
  ] as const)("behind one trusted proxy, %s: %s counts against the connecting peer", (header, value) => {
    const how = { hops: 1, header, v6Prefix: 64 } as const;
    expect(clientOf("192.0.2.5", (n) => (n === header ? value : undefined), how)).toEqual({
      ip: "192.0.2.5",
      key: "192.0.2.5",
    });
  });

  it("behind two trusted proxies, a token where the client should be counts against the nearer proxy's address", () => {
    const how = { hops: 2, header: "x-forwarded-for", v6Prefix: 64 } as const;
    const seen = (value: string) => clientOf("192.0.2.5", () => value, how).ip;
    expect(seen("203.0.113.1, unknown, 198.51.100.7")).toBe("198.51.100.7");
    expect(seen("203.0.113.1, unknown, _hidden")).toBe("192.0.2.5");
    expect(seen("203.0.113.1, 198.51.100.9, 198.51.100.7")).toBe("198.51.100.9");
  });

  it("reads the for= node of each RFC 7239 element", () => {
    expect(
      forwardedFor('for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711", for="198.51.100.9:80"'),
    ).toEqual(["192.0.2.60", "2001:db8:cafe::17", "198.51.100.9"]);
    expect(forwardedFor("proto=https, for=_hidden, for=unknown")).toEqual(["unknown", "_hidden", "unknown"]);
  });

  it.each([
    [0, "127.0.0.2"],
    [1, "198.51.100.7"],
    [2, "2001:db8:1:2::9"],
    [3, "203.0.113.1"],
    [9, "203.0.113.1"],
  ])("Forwarded counts hops as X-Forwarded-For does: %i trusted → %s", (hops, ip) => {
    const how = (header: "forwarded" | "x-forwarded-for") => ({ hops, header, v6Prefix: 64 }) as const;
    const headers: Record<string, string> = {
      forwarded: 'for=203.0.113.1, for="[2001:db8:1:2::9]:80";proto=https, for=198.51.100.7',
      "x-forwarded-for": "203.0.113.1, 2001:db8:1:2::9, 198.51.100.7",
    };
    const viaForwarded = clientOf("127.0.0.2", (n) => headers[n], how("forwarded"));
    const viaXff = clientOf("127.0.0.2", (n) => headers[n], how("x-forwarded-for"));
    expect(viaForwarded).toEqual(viaXff);
    expect(viaForwarded.ip).toBe(ip);
  });
});

describe("CLIENT_IPV6_PREFIX: 48 to 128 bits, as documented", () => {
  it.each(["48", "56", "64", "128"])("%s is taken", (prefix) => {
    expect(parseConfig({ CLIENT_IPV6_PREFIX: prefix }).CLIENT_IPV6_PREFIX).toBe(Number(prefix));
  });

  // Shorter than a /48 counts a whole provider's customers as one client (a /32 is an ISP's allocation).
  it.each(["0", "32", "47", "129", "64.5", "sixty-four"])("%s is refused, naming the variable", (prefix) => {
    expect(() => parseConfig({ CLIENT_IPV6_PREFIX: prefix })).toThrow(ConfigError);
    expect(() => parseConfig({ CLIENT_IPV6_PREFIX: prefix })).toThrow(/CLIENT_IPV6_PREFIX/);
  });

  it.each([
    [{}, "/64"],
    [{ CLIENT_IPV6_PREFIX: "48" }, "/48"],
  ])("the served document tells clients how they are counted (%j → %s)", async (env, network) => {
    const t = await testApp(env);
    try {
      const doc = (await (await t.app.request("/v1/openapi.json")).json()) as { info: { description: string } };
      expect(doc.info.description).toContain(`an IPv6 client by its ${network} network`);
    } finally {
      await t.close();
    }
  });

  it("the README's configuration table states the same range", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const row = readme.split("\n").find((l) => l.startsWith("| `CLIENT_IPV6_PREFIX`"));
    expect(row).toContain("48–128");
  });
});

describe.each([
  ["X-Forwarded-For", {}, (ip: string) => ({ "X-Forwarded-For": ip })],
  ["Forwarded (RFC 7239)", { FORWARDED_HEADER: "forwarded" }, (ip: string) => ({ Forwarded: `for="[${ip}]:1234"` })],
])("behind a trusted proxy writing %s, demo limit 3", (_name, env, header) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: "3", ...env });
  });
  afterAll(() => t.close());

  it("six addresses of one /64 share one budget: 3 × 200, then 429", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++)
      statuses.push((await t.app.request(PATH, { headers: header(`2001:db8:1:2::${i}`) })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it("another /64 has its own budget", async () => {
    expect((await t.app.request(PATH, { headers: header("2001:db8:9:9::1") })).status).toBe(200);
  });
});

describe("an address with a port in X-Forwarded-For (as some load balancers write it) counts as the address", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: "2" });
  });
  afterAll(() => t.close());

  it.each([
    ["IPv4", ["198.51.100.8:4711", "198.51.100.8:4712", "198.51.100.8"]],
    ["IPv6", ["[2001:db8:1:7::1]:4711", "[2001:db8:1:7::2]:4712", "2001:db8:1:7::3"]],
  ])("%s: a new port is not a new client", async (_family, spellings) => {
    const statuses = [];
    for (const ip of spellings)
      statuses.push((await t.app.request(PATH, { headers: { "X-Forwarded-For": ip } })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe("IPv4-mapped addresses count as the IPv4 address", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: "2" });
  });
  afterAll(() => t.close());

  it("::ffff:198.51.100.7, its hex spelling and 198.51.100.7 are one client", async () => {
    const spellings = ["::ffff:198.51.100.7", "::ffff:c633:6407", "198.51.100.7"];
    const statuses = [];
    for (const ip of spellings)
      statuses.push((await t.app.request(PATH, { headers: { "X-Forwarded-For": ip } })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe("the hot lane counts by the same network", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await testServer({ TRUST_PROXY: "1", DEMO_HOURLY_LIMIT: "3" });
  });
  afterAll(() => t.close());

  it("repeated cached GETs from six addresses of one /64: 3 × 200, then 429", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const res = await fetch(`${t.url}${PATH}`, { headers: { "X-Forwarded-For": `2001:db8:1:2::${i}` } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(t.deps.metrics).toBeDefined();
  });

  it("forwarded tokens that are no address share the connecting proxy's budget: a new token buys none", async () => {
    const statuses: number[] = [];
    for (const token of ["unknown", "_hidden", "tok-1", "tok-2", "tok-3"]) {
      const res = await fetch(`${t.url}${PATH}`, { headers: { "X-Forwarded-For": token } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});

// Real IPv6 sockets need a /64 on loopback: the fixture makes one in a network namespace of its own.
const netns = canRun("unshare", ["--net", "true"]);
describe.skipIf(!netns)(
  `over real IPv6 sockets from one /64 (network namespace)${netns ? "" : " — skipped: unshare --net is not permitted here"}`,
  () => {
    it("six addresses of 2001:db8:1:2::/64 get 3 × 200 then 429; another /64 gets 200", {
      timeout: 90_000,
    }, async () => {
      const { stdout } = await promisify(execFile)(
        "unshare",
        ["--net", process.execPath, "--import", "tsx", "test/http/client-ip-ipv6-netns.fixture.ts"],
        { env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 },
      );
      const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
      expect(result).toEqual({ sameNetwork: [200, 200, 200, 429, 429, 429], otherNetwork: [200, 200] });
    });
  },
);
