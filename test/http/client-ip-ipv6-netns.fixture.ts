/**
 * Run inside a fresh network namespace (`unshare --net`) by client-ip-ipv6.test.ts: loopback gets a
 * whole /64 (a local route, so any address in it can be bound), Almanac listens on `::` with a demo
 * limit of 3, and GETs arrive from six addresses of one /64 and two of another, over real IPv6
 * sockets, without any proxy header. Prints the statuses as JSON.
 */
import { execFileSync } from "node:child_process";
import http from "node:http";
import { startServer } from "../../src/server.js";
import { closeNow, testApp } from "../helpers/app.js";

execFileSync("ip", ["link", "set", "lo", "up"]);
for (const net of ["2001:db8:1:2::/64", "2001:db8:1:3::/64"])
  execFileSync("ip", ["-6", "route", "add", "local", net, "dev", "lo"]);
// The local routes answer for both prefixes; a client socket may bind any address in them.
execFileSync("sysctl", ["-qw", "net.ipv6.ip_nonlocal_bind=1"]);

const t = await testApp({ DEMO_HOURLY_LIMIT: "3" });
const server = await startServer(t.app, t.deps, { port: 0, host: "::" });

const get = (localAddress: string) =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(
      { host: "2001:db8:1:2::ffff", port: server.port, path: "/v1/moon?date=2024-01-25", localAddress, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });

const sameNetwork: number[] = [];
for (let i = 1; i <= 6; i++) sameNetwork.push(await get(`2001:db8:1:2::${i}`));
const otherNetwork = [await get("2001:db8:1:3::1"), await get("2001:db8:1:3::2")];
await closeNow(server);
await t.close();
console.log(JSON.stringify({ sameNetwork, otherNetwork }));
