// Buckets a V8 .cpuprofile's self time by where it runs: the socket write, Node's HTTP code, the
// limiter, GC, each package, and Almanac's own code by source module (found through the module
// markers esbuild writes into the bundle, or the source path when the server ran through tsx).
// `US=<CPU µs per request> node bench/profile-buckets.mjs FILE.cpuprofile [SKIP_MS] [DIST_DIR]`
// prints each bucket's share and, with US, its µs per request (docs/benchmarks.md, seventh session).
import { readFileSync } from "node:fs";

const [file, skipMs = "3000", distDir] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const SOCKET =
  /^(writev|writevGeneric|Socket\._writev|Socket\._writeGeneric|Socket\._write|clearBuffer|doWrite|Writable\.uncork|afterWrite|afterWriteTick|onWriteComplete|writeGeneric|handleWriteReq)$/;
const modules = new Map();
function moduleAt(url, line) {
  let path = url.replace("file://", "");
  if (distDir) path = path.replace(/^.*\/dist\//, `${distDir}/`);
  let marks = modules.get(path);
  if (!marks) {
    marks = [];
    try {
      readFileSync(path, "utf8")
        .split("\n")
        .forEach((l, i) => {
          // A worktree whose node_modules is a link to another checkout's: `// ../main/node_modules/…`.
          const m = /^\/\/ (?:\.\.\/[^/\s]+\/)*(src\/\S+|node_modules\/\S+)/.exec(l);
          if (m) marks.push([i, m[1]]);
        });
    } catch {}
    modules.set(path, marks);
  }
  let found = "?";
  for (const [i, m] of marks) {
    if (i <= line) found = m;
    else break;
  }
  return found;
}
function bucket(n) {
  const { functionName: f, url, lineNumber } = n.callFrame;
  if (f === "(garbage collector)") return "GC";
  if (SOCKET.test(f)) return "socket write (node)";
  if (url.includes("better-sqlite3") || /SqliteRateLimiter|sqliteTransaction/.test(f)) return "limiter (limits.db)";
  if (url.startsWith("node:_http") || /^parserOn/.test(f)) return "HTTP parser, headers, ServerResponse (node)";
  if (url.startsWith("node:internal/crypto") || url === "node:crypto") return "crypto (SHA-1, randomUUID)";
  if (url.includes("undici")) return "undici Headers/Response";
  if (/node:internal\/(process\/task_queues|timers)|^node:timers/.test(url) || f === "runMicrotasks")
    return "ticks, timers, microtasks";
  if (url.startsWith("node:") || url === "") return "other node internals / native";
  const pkg = packageOf(url);
  if (pkg) return pkg;
  const source = /\/(src\/.+)$/.exec(url); // run through tsx: the source file itself
  if (source && !url.includes("/dist/"))
    return source[1].startsWith("src/adapters/limiter") ? "limiter (limits.db)" : source[1];
  const mod = moduleAt(url, lineNumber);
  if (mod.startsWith("src/adapters/limiter")) return "limiter (limits.db)";
  // A package the bundle holds (hono, zod): its bucket as if it were loaded from node_modules.
  return packageOf(mod) ?? mod;
}
function packageOf(path) {
  if (path.includes("node_modules/hono/")) return "hono (compose, context, routing, validator)";
  if (path.includes("@hono/node-server")) return "@hono/node-server (Request/Response bridge)";
  if (/node_modules\/(zod|@hono\/zod|@asteasolutions)/.test(path)) return "zod validation";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return m?.[1];
}
const t = new Map();
let total = 0,
  elapsed = 0;
p.samples.forEach((id, i) => {
  elapsed += (p.timeDeltas[i] ?? 0) / 1000;
  const n = byId.get(id);
  if (!n || elapsed < Number(skipMs) || ["(idle)", "(program)", "(root)"].includes(n.callFrame.functionName)) return;
  const dt = (p.timeDeltas[i] ?? 0) / 1000;
  total += dt;
  const b = bucket(n);
  t.set(b, (t.get(b) ?? 0) + dt);
});
const us = Number(process.env.US ?? 0);
for (const [k, v] of [...t].sort((a, b) => b[1] - a[1]))
  console.log(
    `${((100 * v) / total).toFixed(1).padStart(5)}%${us ? `  ${((us * v) / total).toFixed(1).padStart(6)} µs` : ""}  ${k}`,
  );
