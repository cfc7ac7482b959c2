import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Vitest global setup: one temporary root per test run, under which every `tempDir()` of every
 * test file is made, removed whole when the run ends — a run leaves nothing in the temp dir.
 * 0755 so nginx's worker (another user) can read the files the load-balancer test gives it.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "almanac-run-"));
  chmodSync(root, 0o755);
  process.env.ALMANAC_TEST_ROOT = root;
  return () => rmSync(root, { recursive: true, force: true });
}
