import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnCli } from "../test/helpers/process.js";
import { type Child, spawnNode, waitFor200 } from "./procs.js";

export interface Server {
  name: string;
  url: string;
  child: Child;
  /** Spawn → first 200 on the ready path, in ms. */
  startMs: number;
  env: NodeJS.ProcessEnv;
  close: () => Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The environment a child starts from: no services or Node options unless asked for. */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ["DATABASE_URL", "REDIS_URL", "NODE_OPTIONS", "WEB_CONCURRENCY"]) delete env[k];
  return env;
}

/**
 * Builds the bundle, so the servers run what `npm start` runs after `npm ci`. bin/almanac.js
 * ignores a bundle older than any source file and runs the sources through tsx instead (slower to
 * start, ~60 MB more), so an edited or freshly checked-out tree is rebuilt first.
 */
export function buildBundle(root = "."): void {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs")], { stdio: "inherit" });
}

export async function startYardstick(): Promise<Server> {
  const port = await freePort();
  const since = performance.now();
  const child = spawnNode(["--import", "tsx", "bench/yardstick.ts"], { ...baseEnv(), PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const startMs = await waitFor200(`${url}/`, child, since);
  return { name: "yardstick", url, child, startMs, env: {}, close: child.stop };
}

/**
 * The Node flags `npm start` passes to `bin/almanac.js serve` (package.json's start script), so
 * every bench server runs as `npm start` would.
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    scripts: { start: string };
  };
  const flags = /^node((?: --\S+)*) bin\/almanac\.js serve$/.exec(pkg.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json's start script is not node [flags] bin/almanac.js serve`);
  return flags.split(" ").filter(Boolean);
}

/** `NAME=VALUE,NAME=VALUE` (each split at its first `=`) as an environment for a bench server. */
export function envList(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(",")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
}

export interface AlmanacOptions {
  env?: Record<string, string>;
  /** Writes a V8 CPU profile into this directory when the server exits. */
  cpuProfDir?: string;
  /** The checkout whose `bin/almanac.js` runs (default: this one). */
  root?: string;
}

/**
 * `node bin/almanac.js serve` with `npm start`'s Node flags (then BENCH_NODE_FLAGS, which win), its
 * own temp DATA_DIR, logs at warn and the demo limit raised.
 */
export async function startAlmanac(opts: AlmanacOptions = {}): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), "almanac-bench-"));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    NODE_ENV: "production",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    // The config's ceiling: one bench run stays well under it per client IP and hour.
    DEMO_HOURLY_LIMIT: "1000000",
    HOST: "127.0.0.1",
    PORT: String(port),
    ...opts.env,
  };
  const since = performance.now();
  // Node 20 refuses --cpu-prof in NODE_OPTIONS, so it goes on the command line.
  const prof = opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const child = spawnNode([...prof, ...startFlags(), ...flags, join(opts.root ?? ".", "bin/almanac.js"), "serve"], env);
  const url = `http://127.0.0.1:${port}`;
  const startMs = await waitFor200(`${url}/healthz`, child, since);
  return {
    name: "almanac",
    url,
    child,
    startMs,
    env,
    close: async () => {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates an API key with the CLI against the server's store; returns its plaintext. */
export async function createKey(server: Server, permission: string): Promise<string> {
  const run = await spawnCli(
    ["keys", "create", "--name", "bench", "--permission", permission],
    server.env as Record<string, string>,
  );
  if (run.code !== 0) throw new Error(`keys create: exit ${run.code}: ${run.stderr.trim().slice(0, 500)}`);
  const out = run.stdout;
  const json = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1)) as {
    key?: string;
    remaining?: unknown;
  };
  if (!json.key) throw new Error(`keys create printed no key: ${out.slice(0, 300)}`);
  if (json.remaining != null) throw new Error(`the bench key has a usage limit (${json.remaining})`);
  return json.key;
}
