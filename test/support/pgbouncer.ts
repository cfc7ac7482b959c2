import { type ChildProcess, execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canRun } from "../helpers/env.js";
import { spawnListening } from "../helpers/process.js";
import { freePort } from "../helpers/redis-server.js";

const PGBOUNCER = "/usr/sbin/pgbouncer";

/** Why PgBouncer cannot run here (undefined when it can): it refuses to run as root, so root runs it as `postgres`. */
export function pgbouncerUnavailable(): string | undefined {
  if (!existsSync(PGBOUNCER)) return `no ${PGBOUNCER} (Debian's pgbouncer)`;
  if (process.getuid?.() === 0 && !canRun("id", ["-u", "postgres"]))
    return "running as root without a postgres OS user";
  return undefined;
}

/**
 * A real PgBouncer running the repository's own `deploy/pgbouncer.ini` (transaction pooling),
 * with its `almanac` database pointed at `dbname` on `server` (host and port of a PostgreSQL
 * that trusts `user`), listening on a free port of 127.0.0.1, trusting its clients.
 */
export class PgBouncer {
  private constructor(
    private readonly proc: ChildProcess,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(server: { host: string; port: number; user: string; dbname: string }): Promise<PgBouncer> {
    // Its own directory, readable by the user it runs as (not under the run's root, which is 0700).
    const dir = mkdtempSync(join(tmpdir(), "almanac-pgbouncer-"));
    chmodSync(dir, 0o755);
    const port = await freePort();
    const rewrite: [RegExp, string][] = [
      [
        /^almanac = .*$/m,
        `almanac = host=${server.host} port=${server.port} dbname=${server.dbname} user=${server.user}`,
      ],
      [/^listen_addr = .*$/m, "listen_addr = 127.0.0.1"],
      [/^listen_port = .*$/m, `listen_port = ${port}\nunix_socket_dir =\npidfile = ${join(dir, "pgbouncer.pid")}`],
      [/^auth_type = .*$/m, "auth_type = trust"],
      [/^auth_file = .*$/m, `auth_file = ${join(dir, "userlist.txt")}`],
    ];
    let ini = readFileSync(new URL("../../deploy/pgbouncer.ini", import.meta.url), "utf8");
    for (const [pattern, line] of rewrite) {
      if (!pattern.test(ini))
        throw new Error(`deploy/pgbouncer.ini has no line ${pattern} for this harness to rewrite`);
      ini = ini.replace(pattern, line);
    }
    writeFileSync(join(dir, "pgbouncer.ini"), ini);
    writeFileSync(join(dir, "userlist.txt"), `"${server.user}" ""\n`);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
      chownSync(dir, uid, gid);
    }
    // -u: started as root, it runs as postgres (PgBouncer refuses to run as root).
    const asUser = process.getuid?.() === 0 ? ["-u", "postgres"] : [];
    const { proc, output } = await spawnListening(PGBOUNCER, [...asUser, join(dir, "pgbouncer.ini")], port);
    const bouncer = new PgBouncer(proc, dir, port);
    bouncer.output = output;
    return bouncer;
  }

  /** What PgBouncer logged (to stderr): connections, and any error it sent a client. */
  output: () => string = () => "";

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGINT");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
