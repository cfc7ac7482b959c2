import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

export interface TopOptions {
  limit?: number;
  /** Group by package / source folder instead of by function. */
  byPackage?: boolean;
  /** Ignore the first ms of the profile (process start-up). */
  skipMs?: number;
  /** Count time spent in callees too (each function once per sample). */
  inclusive?: boolean;
}

const IDLE = new Set(["(idle)", "(program)"]);

function label(n: Node, byPackage: boolean): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, "$1/");
  if (byPackage) {
    const pkg = /^(node_modules\/(?:@[^/]+\/)?[^/]+|src\/[^/]+(?:\/[^/]+)?|node:[^/]+)/.exec(where)?.[1];
    return pkg ?? (where || functionName || "(native)");
  }
  return `${functionName || "(anonymous)"}  ${where}${where ? `:${lineNumber + 1}` : ""}`;
}

/**
 * The functions with the most time in a V8 .cpuprofile, as `share  name  file:line` lines; shares
 * are of busy time (idle excluded).
 */
export function topFunctions(file: string, opts: TopOptions = {}): string[] {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map<string, number>();
  let total = 0;
  let elapsed = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    elapsed += dt;
    const n = byId.get(id);
    if (!n || elapsed < (opts.skipMs ?? 0) || IDLE.has(n.callFrame.functionName)) return;
    total += dt;
    const seen = new Set<string>();
    for (let cur: Node | undefined = n; cur; cur = opts.inclusive ? byId.get(parent.get(cur.id) ?? -1) : undefined) {
      const key = label(cur, opts.byPackage ?? false);
      if (seen.has(key) || key.startsWith("(root)")) continue;
      seen.add(key);
      time.set(key, (time.get(key) ?? 0) + dt);
    }
  });
  return [...time.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, opts.limit ?? 15)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts: TopOptions = {
    limit: Number(process.env.TOP ?? 20),
    byPackage: process.env.BY === "package",
    skipMs: Number(process.env.SKIP_MS ?? 0),
    inclusive: process.env.INCLUSIVE === "1",
  };
  for (const f of process.argv.slice(2)) process.stdout.write(`${f}\n${topFunctions(f, opts).join("\n")}\n\n`);
}
