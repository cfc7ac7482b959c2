// Bundles the TypeScript sources into dist/ with esbuild (packages stay in node_modules).
// Runs as `prepare`, so `npm ci` / `npm install` leave a fresh build; bin/almanac.js uses it
// only while it is newer than every file under src/. Code splitting keeps lazily imported
// features (better-auth, date-holidays) out of the start-up path.
import { existsSync, rmSync } from "node:fs";

const root = new URL("..", import.meta.url).pathname;
if (!existsSync(`${root}src/cli/main.ts`)) {
  // e.g. a Docker layer that installs dependencies before copying the sources
  console.log("almanac build: no sources yet, skipped");
  process.exit(0);
}
// esbuild is a development dependency: an install without them (`npm ci --omit=dev`) has no
// bundle, and bin/almanac.js runs the sources through tsx instead.
const esbuild = await import("esbuild").catch(() => undefined);
if (!esbuild) {
  console.log("almanac build: esbuild is not installed (a production install), skipped; the sources run through tsx");
  process.exit(0);
}
const { build } = esbuild;
rmSync(`${root}dist`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { almanac: "src/cli/main.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning",
});
