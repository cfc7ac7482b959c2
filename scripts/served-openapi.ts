/**
 * The /v1/openapi.json a deployment serves: the real app on embedded dependencies in a temporary
 * DATA_DIR, no network. Its PUBLIC_URL (https) is the first server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { parseConfig } from "../src/config.js";
import { buildDeps, closeDeps } from "../src/deps.js";

export async function servedOpenApi(publicUrl = "https://almanac.example"): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), "almanac-openapi-"));
  const config = parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent", PUBLIC_URL: publicUrl });
  const deps = await buildDeps(config, pino({ level: "silent" }));
  try {
    return await (await createApp(deps).request("/v1/openapi.json")).json();
  } finally {
    await closeDeps(deps);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
