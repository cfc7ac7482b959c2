#!/usr/bin/env node
// The `almanac` command. It runs the esbuild bundle in dist/ (made by `npm ci` / `npm install`
// through the `prepare` script, or `npm run build`) when that bundle is newer than every source
// file — it starts in about half the time and memory — and otherwise runs the TypeScript
// sources directly through tsx, so an edited checkout never runs stale code.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bundle = join(root, "dist", "almanac.js");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

const sources = join(root, "src");
let cli;
if (existsSync(bundle) && (!existsSync(sources) || statSync(bundle).mtimeMs >= newestMtime(sources))) {
  cli = await import(bundle);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../src/cli/main.ts");
}
await cli.main();
