import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { canRun, tempDir } from "./env.js";
import { freePort } from "./redis-server.js";

/** Debian's redis-sentinel is redis-server in Sentinel mode; either binary runs it. */
export const hasRedisSentinel = canRun("redis-server", ["--version"]) && canRun("redis-sentinel", ["--version"]);

/** The repository's own Sentinel configuration (deploy/compose.yaml runs three of it). */
const DEPLOYED = readFileSync(new URL("../../deploy/sentinel.conf", import.meta.url), "utf8");
const MONITOR = /^sentinel monitor (\S+) \S+ \d+ (\d+)$/m;

/** The primary's name in deploy/sentinel.conf (REDIS_SENTINEL_NAME). */
export const SENTINEL_NAME = MONITOR.exec(DEPLOYED)?.[1] ?? "";

/**
 * deploy/sentinel.conf for a Sentinel on `port` watching 127.0.0.1:`primary`, tuned to notice and
 * fail over within a second or two; it writes only under `dir`.
 */
function sentinelConf(port: number, primary: number, dir: string): string {
  const rewrite: [RegExp, string][] = [
    [/^port \d+$/m, `port ${port}\nbind 127.0.0.1\ndir ${dir}`],
    [MONITOR, `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary} $2`],
    [/^(sentinel down-after-milliseconds \S+) \d+$/m, "$1 1000"],
    [/^(sentinel failover-timeout \S+) \d+$/m, "$1 5000"],
  ];
  let conf = DEPLOYED;
  for (const [pattern, line] of rewrite) {
    if (!pattern.test(conf)) throw new Error(`deploy/sentinel.conf has no line ${pattern} for this harness to rewrite`);
    conf = conf.replace(pattern, line);
  }
  return conf;
}

/** Runs `bin args` until it prints `ready`; killed with the group. */
async function launch(bin: string, args: string[], ready: string): Promise<ChildProcess> {
  const proc = spawn(bin, args, { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} ${args.join(" ")} did not start:\n${out}`)), 10_000);
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once("exit", (code) => reject(new Error(`${bin} exited ${code}:\n${out}`)));
  });
  proc.stdout?.resume();
  return proc;
}

const until = async (what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/**
 * A private Sentinel deployment on free ports: one primary, one replica of it, and three
 * Sentinels running deploy/sentinel.conf (see sentinelConf). Nothing is written outside a
 * temporary directory (the Sentinels' files, each data node's RDB file of a replica's sync).
 */
export class SentinelGroup {
  private readonly procs: ChildProcess[] = [];
  private constructor(
    readonly dataPorts: [number, number],
    readonly sentinelPorts: number[],
  ) {}

  static async start(): Promise<SentinelGroup> {
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const g = new SentinelGroup([ports[0] as number, ports[1] as number], ports.slice(2));
    const [primary, replica] = g.dataPorts;
    const dir = tempDir("almanac-sentinel-");
    // A replica's first sync makes the primary write an RDB file: into the temporary directory,
    // never the working directory.
    const data = (port: number) => [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--dbfilename",
      `dump-${port}.rdb`,
    ];
    g.procs.push(await launch("redis-server", data(primary), "Ready to accept connections"));
    g.procs.push(
      await launch(
        "redis-server",
        [...data(replica), "--replicaof", "127.0.0.1", String(primary)],
        "Ready to accept connections",
      ),
    );
    for (const port of g.sentinelPorts) {
      // Each Sentinel rewrites its own file (it records the replicas and the other Sentinels it learns).
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(file, sentinelConf(port, primary, dir));
      g.procs.push(await launch("redis-sentinel", [file], "Sentinel ID is"));
    }
    await g.settled(primary);
    return g;
  }

  /** REDIS_SENTINELS for these Sentinels. */
  get sentinels(): string {
    return this.sentinelPorts.map((p) => `127.0.0.1:${p}`).join(",");
  }

  /** A plain client of one data node (the caller disconnects it). */
  client(port: number): Redis {
    return new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 1 });
  }

  /** What `command` answers on one server, on a connection of its own. */
  async ask(port: number, ...command: [string, ...(string | number)[]]): Promise<unknown> {
    const c = this.client(port);
    try {
      await c.connect();
      return await c.call(...command);
    } finally {
      c.disconnect();
    }
  }

  /** The primary's port as the first Sentinel names it. */
  async primary(): Promise<number> {
    const addr = (await this.ask(
      this.sentinelPorts[0] as number,
      "SENTINEL",
      "get-master-addr-by-name",
      SENTINEL_NAME,
    )) as [string, string] | null;
    return Number(addr?.[1]);
  }

  /**
   * Waits until every Sentinel names `primary`, sees the other data node as its replica and the
   * other two Sentinels, and the replica is in sync: a failover can then be asked for.
   */
  async settled(primary: number): Promise<void> {
    const replica = this.dataPorts.find((p) => p !== primary) as number;
    for (const s of this.sentinelPorts) {
      await until(`sentinel ${s} to see the deployment`, async () => {
        const addr = (await this.ask(s, "SENTINEL", "get-master-addr-by-name", SENTINEL_NAME)) as string[] | null;
        const replicas = (await this.ask(s, "SENTINEL", "replicas", SENTINEL_NAME)) as string[][];
        const others = (await this.ask(s, "SENTINEL", "sentinels", SENTINEL_NAME)) as string[][];
        const fields = (row: string[]) => Object.fromEntries(row.flatMap((v, i) => (i % 2 ? [] : [[v, row[i + 1]]])));
        const replicaOk = replicas.some((r) => {
          const f = fields(r);
          return Number(f.port) === replica && !String(f.flags).includes("down") && f["master-link-status"] === "ok";
        });
        return Number(addr?.[1]) === primary && replicaOk && others.length === this.sentinelPorts.length - 1;
      });
    }
    await until("the replica to be in sync", async () =>
      String(await this.ask(replica, "INFO", "replication")).includes("master_link_status:up"),
    );
  }

  /** Asks a Sentinel to fail over now (the replica is promoted, the primary made its replica). */
  async failover(): Promise<void> {
    await this.ask(this.sentinelPorts[0] as number, "SENTINEL", "FAILOVER", SENTINEL_NAME);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve(undefined);
            p.once("exit", resolve);
            p.kill("SIGKILL");
          }),
      ),
    );
  }
}
