/**
 * `npm run lint:openapi`: the served /v1/openapi.json linted by Spectral (OpenAPI + OWASP API
 * Top 10 rulesets, see .spectral.yaml) and Redocly (recommended rules). Exits non-zero on any
 * error. Offline: both come from node_modules; Redocly's telemetry and update check are off.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "almanac-lint-"));
const file = join(dir, "openapi.json");
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: "inherit", env }).status ?? 1;
let failed = 0;
try {
  failed += run(process.execPath, ["--import", "tsx", "scripts/openapi-dump.ts", file]);
  if (failed === 0) {
    failed += run("npx", ["spectral", "lint", file, "--ruleset", ".spectral.yaml", "--fail-severity", "error"]);
    failed += run("npx", ["redocly", "lint", file]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);
