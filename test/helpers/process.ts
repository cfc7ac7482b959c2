import { type ChildProcess, spawn } from "node:child_process";
import { CONFIG_KEYS } from "../../src/config.js";
import { withRedisNamespace } from "./env.js";
import { freePort, listening } from "./redis-server.js";

/**
 * The environment of a spawned almanac process: this one's (PATH, HOME…) without any Almanac
 * configuration, plus exactly what the test passes — so CI's DATABASE_URL/REDIS_URL never
 * leak into a test that means the embedded defaults.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of CONFIG_KEYS) delete base[key];
  return { ...base, LOG_LEVEL: "warn", ...withRedisNamespace(env) };
}

/** Fetch options for a request whose socket closes after its answer (no idle keep-alive socket left). */
export const CLOSE: RequestInit = { headers: { connection: "close" } };

export interface ServerProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Runs `almanac serve` as a real process (what `npm start` runs) and waits until it answers; on
 * `port` (a restart in the same place), else on a free one.
 */
export async function spawnServer(
  env: Record<string, string>,
  opts: { startTimeoutMs?: number; port?: number } = {},
): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  const proc = spawn(process.execPath, ["bin/almanac.js", "serve"], {
    env: { ...childEnv(env), PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    try {
      // Connection: close, so the probe leaves no idle socket that a SIGTERM would wait out.
      if ((await fetch(`${url}/healthz`, CLOSE)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, url, port, output: () => out, exited };
}

/** SIGTERM, then the exit code (the process is killed hard if it does not exit in time). */
export async function stop(server: ServerProcess | undefined, timeoutMs = 20_000): Promise<number | null> {
  if (!server || server.proc.exitCode !== null) return server?.proc.exitCode ?? null;
  server.proc.kill("SIGTERM");
  const timer = setTimeout(() => server.proc.kill("SIGKILL"), timeoutMs);
  const code = await server.exited;
  clearTimeout(timer);
  return code;
}

/**
 * Runs the CLI as a real process to completion: for the smoke test of `bin/almanac.js` itself.
 * Everything else runs it in-process (helpers/cli.ts), a process start costs seconds.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["bin/almanac.js", ...args], {
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d) => {
      stdout += d;
    });
    proc.stderr.on("data", (d) => {
      stderr += d;
    });
    proc.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs a service's binary (`file args…`) in the foreground, keeping what it prints, and waits
 * until it accepts connections on 127.0.0.1:`port` (10 s at most).
 */
export async function spawnListening(
  file: string,
  args: string[],
  port: number,
): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout?.on("data", (d) => {
    output += d;
  });
  proc.stderr?.on("data", (d) => {
    output += d;
  });
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`${file} did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, output: () => output };
}
