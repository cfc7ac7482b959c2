import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canRun, tempDir } from "../helpers/env.js";
import { spawnListening } from "../helpers/process.js";
import { freePort } from "../helpers/redis-server.js";

const HAPROXY = "/usr/sbin/haproxy";

export const hasHaproxy = canRun(HAPROXY, ["-v"]);

/**
 * A real HAProxy running the repository's own `deploy/haproxy.cfg` (PostgreSQL behind it, routed
 * to the node that accepts writes), with its `server pgN pgN:5432 …` lines pointed at local ports
 * and its `bind :5432` at a free port of 127.0.0.1. It logs to its stdout (`log()`): each server
 * marked up or down, and each connection.
 */
export class Haproxy {
  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
    readonly log: () => string,
  ) {}

  static async start(servers: number[]): Promise<Haproxy> {
    const dir = tempDir("almanac-haproxy-");
    const port = await freePort();
    let cfg = readFileSync(new URL("../../deploy/haproxy.cfg", import.meta.url), "utf8");
    const lines = [...cfg.matchAll(/^(\s*)server pg\d+ pg\d+:5432( [^\n]*)?\n/gm)];
    const [first] = lines;
    if (!first || !/^\s*bind :5432$/m.test(cfg)) {
      throw new Error(
        "deploy/haproxy.cfg has no `bind :5432` or `server pgN pgN:5432` lines for this harness to rewrite",
      );
    }
    const replaced = servers.map((p, i) => `${first[1]}server pg${i + 1} 127.0.0.1:${p}${first[2] ?? ""}\n`).join("");
    for (const l of lines.slice(1)) cfg = cfg.replace(l[0], "");
    cfg = cfg.replace(first[0], replaced).replace(/^(\s*)bind :5432$/m, `$1bind 127.0.0.1:${port}`);
    const file = join(dir, "haproxy.cfg");
    writeFileSync(file, cfg);
    // -db: stay in the foreground, so the test owns the process.
    const { proc, output } = await spawnListening(HAPROXY, ["-db", "-f", file], port);
    return new Haproxy(proc, port, output);
  }

  /**
   * The state the log last gave server `pgN` (1-based, in the order given to `start`): HAProxy
   * counts a server up until its checks fail, so "UP" until the log says otherwise.
   */
  state(n: number): "UP" | "DOWN" {
    const said = [...this.log().matchAll(new RegExp(`Server postgres/pg${n} is (UP|DOWN)`, "g"))].at(-1);
    return said?.[1] === "DOWN" ? "DOWN" : "UP";
  }

  /** Waits until the log gives server `pgN` this state. */
  async until(n: number, state: "UP" | "DOWN", timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.state(n) !== state) {
      if (Date.now() > deadline) throw new Error(`pg${n} never ${state} behind haproxy:\n${this.log()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGTERM");
    await exited;
  }
}
