import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { canRun, tempDir } from "../helpers/env.js";
import { freePort, listening } from "../helpers/redis-server.js";

const NGINX = "/usr/sbin/nginx";

export const hasNginx = canRun(NGINX, ["-v"]);

/** Whether this host has IPv6 loopback (`::1`) to listen on. */
export const hasIpv6Loopback = (() => {
  try {
    return networkInterfaces().lo?.some((a) => a.family === "IPv6" && a.address === "::1") ?? false;
  } catch {
    return false;
  }
})();

/**
 * A real nginx running the repository's own `deploy/nginx.conf` (the compose load balancer),
 * with its upstream servers (the compose services `app1`, `app2`) replaced by local ports and its
 * listeners (`listen 8080;`, `listen [::]:8080;`) on a free port of 127.0.0.1 and, where the host
 * has it, of ::1. Everything nginx writes stays in a private directory.
 */
export class Nginx {
  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
    /** What nginx has written so far (its error log, at `warn`). */
    readonly log: () => string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The same nginx over IPv6 loopback (only where `hasIpv6Loopback`). */
  get url6(): string {
    return `http://[::1]:${this.port}`;
  }

  /** nginx in front of the instances listening on `upstreams` (ports), one `server` line each. */
  static async start(upstreams: number[]): Promise<Nginx> {
    const dir = tempDir("almanac-nginx-");
    for (const sub of ["body", "proxy", "logs"]) mkdirSync(join(dir, sub));
    chmodSync(dir, 0o777); // workers run as nobody when the master runs as root
    for (const sub of ["body", "proxy"]) chmodSync(join(dir, sub), 0o777);
    const port = await freePort();
    let site = readFileSync(new URL("../../deploy/nginx.conf", import.meta.url), "utf8");
    // The compose services' `server appN:8080 <parameters>;` lines become one line per port,
    // with the same parameters.
    const servers = [...site.matchAll(/^(\s*)server app\d+:8080( [^;]*)?;\n/gm)];
    const [first] = servers;
    if (!first || !site.includes("listen 8080;") || !site.includes("listen [::]:8080;")) {
      throw new Error(
        "deploy/nginx.conf has no `server appN:8080` lines, `listen 8080;` or `listen [::]:8080;` for this harness to rewrite",
      );
    }
    const lines = upstreams.map((p) => `${first[1]}server 127.0.0.1:${p}${first[2] ?? ""};\n`).join("");
    for (const s of servers.slice(1)) site = site.replace(s[0], "");
    site = site
      .replace(first[0], lines)
      .replace("listen 8080;", `listen 127.0.0.1:${port};`)
      .replace("listen [::]:8080;", hasIpv6Loopback ? `listen [::1]:${port};` : "");
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        "daemon off;",
        "worker_processes 1;",
        `pid ${join(dir, "nginx.pid")};`,
        `error_log ${join(dir, "logs", "error.log")} warn;`,
        "events { worker_connections 2048; }",
        "http {",
        "  access_log off;",
        `  client_body_temp_path ${join(dir, "body")};`,
        `  proxy_temp_path ${join(dir, "proxy")};`,
        "  fastcgi_temp_path /tmp; uwsgi_temp_path /tmp; scgi_temp_path /tmp;",
        site,
        "}",
      ].join("\n"),
    );
    let output = "";
    const proc = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout?.on("data", (d) => {
      output += d;
    });
    proc.stderr?.on("data", (d) => {
      output += d;
    });
    const log = () => {
      try {
        return output + readFileSync(join(dir, "logs", "error.log"), "utf8");
      } catch {
        return output;
      }
    };
    const deadline = Date.now() + 10_000;
    while (!(await listening(port))) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start:\n${log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return new Nginx(proc, port, log);
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGQUIT"); // graceful: finish in-flight requests
    await exited;
  }
}
