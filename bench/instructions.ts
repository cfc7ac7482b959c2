/**
 * Instructions per request of one Almanac GET, counted by callgrind: repeatable where CPU time is
 * not (the same count within a few per cent whatever else the host runs), so a change to the
 * request path can be judged on a busy 2-core host. The server (`npm start`'s Node flags, the
 * answer cache off unless INSTR_ENV says otherwise) runs under `valgrind --tool=callgrind` with
 * instrumentation off; after the warm-up, `callgrind_control -i on` counts the requests, and the
 * total over them is divided by their number (every thread of the process, its GC and compiler's
 * included). `node --import tsx bench/instructions.ts [path]`; INSTR_WARM (6000) and INSTR_COUNT
 * (4000) requests, INSTR_ENV (NAME=VALUE,…; default ANSWER_CACHE_MB=0), INSTR_ROOT (another
 * checkout to count, e.g. main's before a change; built first). The callgrind file stays in a
 * temp directory for `callgrind_annotate` (its native functions; JIT code shows as addresses).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { buildBundle, envList, freePort, startFlags } from "./servers.js";

const PATH = process.argv[2] ?? "/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12";
const WARM = Number(process.env.INSTR_WARM ?? 6000);
const COUNT = Number(process.env.INSTR_COUNT ?? 4000);
const ROOT = process.env.INSTR_ROOT ?? ".";

buildBundle(ROOT);
const work = mkdtempSync(join(tmpdir(), "almanac-instr-"));
const port = await freePort();
// valgrind names its control pipes after $USER and $HOST, and the server's HOST is its address:
// callgrind_control must be given the same.
const names = { USER: process.env.USER || "almanac", HOST: "127.0.0.1" };
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...names,
  NODE_ENV: "production",
  DATA_DIR: join(work, "data"),
  LOG_LEVEL: "warn",
  DEMO_HOURLY_LIMIT: "1000000",
  PORT: String(port),
  ...envList(process.env.INSTR_ENV ?? "ANSWER_CACHE_MB=0"),
};
for (const k of ["NODE_OPTIONS", "DATABASE_URL", "REDIS_URL", "WEB_CONCURRENCY"]) delete env[k];
const vgdb = `--vgdb-prefix=${join(work, "vgdb")}`;
const out = join(work, "callgrind.out");
const server = spawn(
  "valgrind",
  [
    "--tool=callgrind",
    "--instr-atstart=no",
    vgdb,
    `--callgrind-out-file=${out}`,
    process.execPath,
    ...startFlags(),
    join(ROOT, "bin/almanac.js"),
    "serve",
  ],
  { env, stdio: ["ignore", "ignore", "pipe"] },
);
let stderr = "";
server.stderr?.on("data", (d: Buffer) => {
  stderr = (stderr + d.toString()).slice(-5000);
});
const url = `http://127.0.0.1:${port}`;
const control = (...args: string[]) =>
  execFileSync("callgrind_control", [vgdb, ...args, String(server.pid)], {
    env: { ...process.env, ...names },
    stdio: "ignore",
  });

try {
  for (let waited = 0; ; waited += 500) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (waited > 300_000 || server.exitCode !== null) throw new Error(`the server did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const run = async (amount: number) => {
    const r = await autocannon({ url: `${url}${PATH}`, connections: 10, amount });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${PATH}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  };
  await run(WARM);
  control("-i", "on");
  await run(COUNT);
  control("-i", "off");
  control("-d");
  const dumps = readdirSync(work).filter((f) => f.startsWith("callgrind.out"));
  const total = Math.max(
    ...dumps.flatMap((f) =>
      [...readFileSync(join(work, f), "utf8").matchAll(/^(?:totals|summary): (\d+)/gm)].map((m) => Number(m[1])),
    ),
  );
  console.log(
    `GET ${PATH} (${ROOT === "." ? "this checkout" : ROOT}): ${(total / COUNT / 1000).toFixed(1)} k instructions per request ` +
      `(${COUNT} requests after ${WARM}; callgrind files in ${work})`,
  );
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(join(work, "data"), { recursive: true, force: true });
}
