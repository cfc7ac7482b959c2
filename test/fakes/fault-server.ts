import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * Faults every upstream fake can play instead of answering: an error status, a non-JSON body,
 * never answering, a reset, a redirect, `stall` (headers and part of a body, then nothing),
 * `huge` (a 64 MiB JSON-looking body streamed as fast as the socket takes it, no length),
 * `huge-declared` (a `content-length` of 300 MB) and `drip` (a byte every 20 ms, forever: the
 * connection never goes idle, only a deadline over the whole body ends it).
 */
export type NetFault =
  | "500"
  | "429"
  | "garbage"
  | "wrong-shape"
  | "hang"
  | "reset"
  | "redirect"
  | "stall"
  | "huge"
  | "huge-declared"
  | "drip";

/** Writes `total` bytes of `[0,0,0,…` in 64 KiB chunks, respecting back-pressure, then ends. */
function stream(res: ServerResponse, total: number): void {
  const chunk = Buffer.from(`[${"0,".repeat(32 * 1024 - 1)}`.slice(0, 64 * 1024));
  let sent = 0;
  const pump = () => {
    while (sent < total && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
}

/**
 * Plays `fault` on `res` and returns true, or returns false when there is none to play (or it is
 * one the caller handles itself). `garbage` is the fake's provider-looking, truncated JSON text.
 */
export function answerFault(
  fault: string | null,
  req: IncomingMessage,
  res: ServerResponse,
  garbage: string,
): fault is NetFault {
  switch (fault) {
    case "hang":
      return true;
    case "reset":
      req.socket.destroy();
      return true;
    case "500":
      res.writeHead(500, { "content-type": "text/html" }).end("<h1>Internal Server Error</h1>");
      return true;
    case "429":
      // As rate-limited APIs answer: a JSON error and a Retry-After the caller must not pass on as its own.
      res
        .writeHead(429, { "content-type": "application/json", "retry-after": "30" })
        .end('{"status":429,"error":"Too many requests"}');
      return true;
    case "garbage":
      res.writeHead(200, { "content-type": "application/json" }).end(garbage);
      return true;
    case "wrong-shape":
      // Well-formed JSON with a 200 that is not the provider's schema (a changed or misrouted API).
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":200,"result":{"unexpected":true}}');
      return true;
    case "stall":
      res.writeHead(200, { "content-type": "application/json" });
      res.write(garbage);
      return true;
    case "redirect":
      res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end();
      return true;
    case "huge":
      res.writeHead(200, { "content-type": "application/json" });
      stream(res, 64 * 1024 * 1024);
      return true;
    case "huge-declared":
      res.writeHead(200, { "content-type": "application/json", "content-length": String(300_000_000) });
      stream(res, 300_000_000);
      return true;
    case "drip": {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(" ")), 20);
      res.on("close", () => clearInterval(timer));
      return true;
    }
    default:
      return false;
  }
}

/** The request body parsed as JSON, or undefined when it is not JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * A real HTTP server on 127.0.0.1 (port 0 the first time, the same port on a later `start()`).
 * `gate()` holds answers back until `release()` (to make concurrent requests overlap); `close()`
 * releases them, destroys open sockets and stops listening.
 */
export abstract class FaultServer {
  url = "";
  private server?: Server;
  private port = 0;
  private readonly sockets = new Set<Socket>();
  private held: (() => void)[] = [];
  private gated = false;

  /** Appended to the origin to form `url` (a provider's base path). */
  protected readonly basePath: string = "";

  protected abstract serve(req: IncomingMessage, res: ServerResponse): void | Promise<void>;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    this.server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}${this.basePath}`;
    return this;
  }

  gate(): void {
    this.gated = true;
  }

  release(): void {
    this.gated = false;
    for (const go of this.held.splice(0)) go();
  }

  async close(): Promise<void> {
    this.release();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Resolves at once, or when `release()` is called while gated. */
  protected async released(): Promise<void> {
    if (this.gated) await new Promise<void>((go) => this.held.push(go));
  }
}
