import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers/redis-server.js";

const BIN = (() => {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().at(-1);
  return version ? join(root, version, "bin") : undefined;
})();

/** Why a private PostgreSQL cannot run here (undefined when it can). */
export function privatePostgresUnavailable(): string | undefined {
  if (!BIN || !existsSync(join(BIN, "initdb"))) return "no initdb under /usr/lib/postgresql/*/bin";
  if (process.getuid?.() !== 0) return "not root: cannot run initdb as the postgres OS user";
  try {
    execFileSync("id", ["-u", "postgres"], { stdio: "ignore" });
    execFileSync("runuser", ["--help"], { stdio: "ignore" });
  } catch {
    return "no postgres OS user or no runuser";
  }
  return undefined;
}

const asPostgres = (cmd: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", join(BIN as string, cmd), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });

/**
 * A PostgreSQL cluster of this test's own (initdb in a temp dir owned by `postgres`, its own
 * port and socket dir), which the test may stop and start. The shared one on 5432 is never touched.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  private static async newDir(): Promise<{ dir: string; port: number }> {
    const dir = mkdtempSync(join(tmpdir(), "almanac-pg-"));
    const ids = execFileSync("id", ["-u", "postgres"]).toString().trim();
    const gid = execFileSync("id", ["-g", "postgres"]).toString().trim();
    chownSync(dir, Number(ids), Number(gid));
    return { dir, port: await freePort() };
  }

  static async create(): Promise<PrivatePostgres> {
    const { dir, port } = await PrivatePostgres.newDir();
    const pg = new PrivatePostgres(dir, port);
    asPostgres("initdb", ["-D", pg.data, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    pg.start();
    return pg;
  }

  /** A streaming replica of this cluster (`pg_basebackup -R`: a hot standby following it), started. */
  async replica(): Promise<PrivatePostgres> {
    const { dir, port } = await PrivatePostgres.newDir();
    const standby = new PrivatePostgres(dir, port);
    asPostgres("pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(this.port),
      "-U",
      "postgres",
      "-D",
      standby.data,
      "-R",
      "-X",
      "stream",
      "--no-sync",
    ]);
    standby.start();
    return standby;
  }

  /** Promotes a standby to a primary (`pg_ctl promote`), waiting until it accepts writes. */
  promote(): void {
    asPostgres("pg_ctl", ["-D", this.data, "-w", "promote"]);
  }

  private get data(): string {
    return join(this.dir, "data");
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  start(): void {
    asPostgres("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "log"),
      "-o",
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "-w",
      "start",
    ]);
  }

  /** Immediate stop: connections drop at once, as in a crash. */
  stop(): void {
    asPostgres("pg_ctl", ["-D", this.data, "-m", "immediate", "-w", "stop"]);
  }

  /** Every process of this cluster: the postmaster (its pid heads postmaster.pid) and its children. */
  private processes(): number[] {
    const postmaster = Number(readFileSync(join(this.data, "postmaster.pid"), "utf8").split("\n")[0]);
    const children = execFileSync("pgrep", ["-P", String(postmaster)])
      .toString()
      .trim()
      .split(/\s+/)
      .map(Number);
    return [postmaster, ...children.filter((pid) => pid > 0)];
  }

  /**
   * SIGSTOP to every process: the server neither answers nor refuses (connections are accepted
   * by the kernel and then hear nothing), like a hung or partitioned host. `thaw` resumes it.
   */
  freeze(): void {
    this.frozen = this.processes();
    for (const pid of this.frozen) process.kill(pid, "SIGSTOP");
  }

  thaw(): void {
    for (const pid of this.frozen) process.kill(pid, "SIGCONT");
    this.frozen = [];
  }

  private frozen: number[] = [];

  destroy(): void {
    this.thaw();
    try {
      this.stop();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
