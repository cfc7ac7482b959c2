// Bundles the TypeScript sources into dist/ with esbuild. Runs as `prepare`, so `npm ci` /
// `npm install` leave a fresh build; bin/almanac.js uses it only while it is newer than every
// file under src/. Code splitting keeps lazily imported features (better-auth, date-holidays,
// the Redis, PostgreSQL and mail adapters) out of the start-up path.
//
// Packages stay in node_modules, except the ES-module packages the server loads at every start
// and that are made of many files (kysely 262, zod 95, hono 49): Node resolves, reads, compiles
// and links each file as its own module, about a quarter of the start-up's CPU, where one
// bundled chunk costs a fraction of that (docs/benchmarks.md). They go in together, so
// @hono/zod-openapi and our schemas share one zod and one hono. CommonJS packages stay outside
// (a CommonJS module in an ES bundle needs a require shim, and pino starts its transports from
// its own files).
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
const BUNDLED = /^(kysely|zod|hono|@hono\/[^/]+|@asteasolutions\/zod-to-openapi)(\/|$)/;
/** Every bare import (a package or node: builtin) is external unless it is one of BUNDLED. */
const externals = {
  name: "externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      BUNDLED.test(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};
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
  // ES module builds first (zod-to-openapi's `module`), so every bundled package imports the one zod.
  mainFields: ["module", "main"],
  plugins: [externals],
  sourcemap: "linked",
  logLevel: "warning",
});
