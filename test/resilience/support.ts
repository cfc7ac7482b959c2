import { readdirSync, readlinkSync } from "node:fs";
import { request } from "node:http";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

export { expectErrorShape } from "../helpers/error-shape.js";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}

/**
 * One HTTP request on its own connection (`Connection: close`), so the server holds no
 * keep-alive socket from the test afterwards. Rejects when nothing came back within `limitMs`.
 */
export function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; limitMs?: number } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? "GET", headers: opts.headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started }),
      );
      res.on("error", reject);
    });
    req.setTimeout(opts.limitMs ?? 10_000, () =>
      req.destroy(new Error(`no answer within ${opts.limitMs ?? 10_000} ms`)),
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** Open file descriptors of a process, and how many of them are sockets (Linux /proc). */
export function fdsOf(pid: number): { fds: number; sockets: number } {
  let fds = 0;
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      fds++;
      if (target.startsWith("socket:")) sockets++;
    } catch {
      // closed between readdir and readlink
    }
  }
  return { fds, sockets };
}

/** Polls until `fn` holds or `ms` passes; returns the last value either way. */
export async function settle<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await fn();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    v = await fn();
  }
  return v;
}

export type FrontMode = "pass" | "drip" | "garbage" | "reset";

/**
 * A TCP front on 127.0.0.1 (port 0) for any upstream, HTTP or SMTP. `pass` forwards to the
 * target; `drip` answers the first bytes of a plausible reply, then one byte every 100 ms and
 * never finishes (the slow-drip fault the fakes do not play); `garbage` writes a line of noise
 * and closes; `reset` closes every connection at once (a server that went away mid-request).
 */
export class FaultFront {
  private current: FrontMode = "pass";
  url = "";
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly target: { host: string; port: number },
    private readonly dripHead: string,
    private readonly scheme = "http",
  ) {}

  static forUrl(url: string, dripHead: string): FaultFront {
    const u = new URL(url);
    return new FaultFront({ host: u.hostname, port: Number(u.port) }, dripHead, u.protocol.replace(":", ""));
  }

  async start(): Promise<this> {
    this.server = createServer((client) => this.serve(client));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `${this.scheme}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get mode(): FrontMode {
    return this.current;
  }

  /** A fault also drops open pass-through connections: a pooled keep-alive socket must not dodge it. */
  set mode(mode: FrontMode) {
    this.current = mode;
    if (mode !== "pass") for (const s of this.sockets) s.destroy();
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.on("close", () => this.sockets.delete(s));
    s.on("error", () => s.destroy());
  }

  private serve(client: Socket): void {
    this.track(client);
    if (this.current === "reset") {
      client.destroy();
      return;
    }
    if (this.current === "garbage") {
      client.end("\x00\xff garbage \x7f\r\n");
      return;
    }
    if (this.current === "drip") {
      client.write(this.dripHead);
      const timer = setInterval(() => client.write(" "), 100);
      client.on("close", () => clearInterval(timer));
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    this.track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** An HTTP reply that promises a body and drips it forever. */
export const HTTP_DRIP_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
/** An SMTP greeting that never ends its line. */
export const SMTP_DRIP_HEAD = "220";

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
