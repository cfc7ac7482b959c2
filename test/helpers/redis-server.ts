import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { canRun } from "./env.js";

export const hasRedisServer = canRun("redis-server", ["--version"]);

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * A private redis-server this test may stop, pause and restart without disturbing anything else
 * on the machine (the shared one on 6379 stays untouched).
 */
export class PrivateRedis {
  private proc?: ChildProcess;
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.proc = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("redis-server did not start")), 5000);
      this.proc?.stdout?.on("data", (d: Buffer) => {
        if (d.toString().includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  pause(): void {
    this.proc?.kill("SIGSTOP");
  }

  resume(): void {
    this.proc?.kill("SIGCONT");
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    proc.kill("SIGCONT");
    proc.kill("SIGKILL");
    await new Promise((r) => proc.once("exit", r));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
