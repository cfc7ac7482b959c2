/**
 * Writes the served /v1/openapi.json to a file (for the linters): the real app on embedded
 * dependencies in a temporary DATA_DIR, no network. Usage: node --import tsx scripts/openapi-dump.ts OUT
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { parseConfig } from "../src/config.js";
import { buildDeps, closeDeps } from "../src/deps.js";

const out = process.argv[2] ?? "openapi.json";
const dataDir = mkdtempSync(join(tmpdir(), "almanac-openapi-"));
// The document as a deployment serves it: its PUBLIC_URL (https) is the first server.
const config = parseConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: "silent",
  PUBLIC_URL: process.env.PUBLIC_URL ?? "https://almanac.example",
});
const deps = await buildDeps(config, pino({ level: "silent" }));
try {
  const res = await createApp(deps).request("/v1/openapi.json");
  writeFileSync(out, `${JSON.stringify(await res.json(), null, 2)}\n`);
} finally {
  await closeDeps(deps);
  rmSync(dataDir, { recursive: true, force: true });
}
