import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/** Core the servers run on, and the core the load generator (this process) runs on. */
export const SERVER_CORE = "0";
export const LOAD_CORE = "1";

export const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** Pins every thread of this process to the load core; false when that is not possible. */
export function pinSelf(): boolean {
  if (!hasTaskset) return false;
  try {
    execFileSync("taskset", ["-a", "-pc", LOAD_CORE, String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const live = new Set<ChildProcess>();
// A bench that dies half-way must not leave servers running.
process.once("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));

export interface Child {
  proc: ChildProcess;
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
}

/** Spawns `node ...args` pinned to the server core (taskset execs node, so the pid is node's). */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv): Child {
  const [cmd, argv] = hasTaskset
    ? ["taskset", ["-c", SERVER_CORE, process.execPath, ...args]]
    : [process.execPath, args];
  const proc = spawn(cmd, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
  let out = "";
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  return {
    proc,
    pid: proc.pid ?? -1,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Polls `url` until it answers 200; returns the ms from `since`. */
export async function waitFor200(url: string, child: Child, since: number, timeoutMs = 30_000): Promise<number> {
  for (;;) {
    if (child.proc.exitCode !== null) throw new Error(`server exited early:\n${child.output()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    if (performance.now() - since > timeoutMs)
      throw new Error(`no 200 from ${url} in ${timeoutMs} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resident set size of `pid` in MB (VmRSS from /proc), or NaN off Linux. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

const CLOCK_TICKS_PER_SEC = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) `pid` has used so far, in ms (from /proc/PID/stat), or NaN off Linux. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is 3rd, utime 14th, stime 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SEC;
  } catch {
    return Number.NaN;
  }
}

/** Samples the peak RSS of `pid` every 250 ms until the returned stop function is called. */
export function sampleRss(pid: number): () => number {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 250);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid));
  };
}
