import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { buildAdminDeps, openMigrated } from "../src/admin.js";
import { loadDotenvFile } from "../src/cli/env-file.js";
import { parseConfig } from "../src/config.js";
import { PlanStore } from "../src/features/keys/plan-store.js";
import { tempDir } from "./helpers/env.js";

const logger = pino({ level: "silent" });
const configFor = (dataDir: string) => parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent" });

describe("the admin composition (CLI and cluster primary)", () => {
  it("openMigrated applies every migration once, and better-auth's tables when asked", async () => {
    const config = configFor(tempDir());
    const first = await openMigrated(config, logger);
    expect(first.applied.length).toBeGreaterThan(0);
    // No better-auth tables without { auth: true }: the lookup says "no account" rather than failing.
    expect(await new PlanStore(first.database.db).userIdFor("a@example.com")).toBeNull();
    await first.database.close();

    const second = await openMigrated(config, logger, { auth: true });
    try {
      expect(second.applied).toEqual([]);
      const now = new Date().toISOString();
      await sql`insert into auth_user (id, name, email, "emailVerified", "createdAt", "updatedAt")
                values ('u_1', 'A', 'a@example.com', 1, ${now}, ${now})`.execute(second.database.db);
      expect(await new PlanStore(second.database.db).userIdFor("A@Example.COM")).toBe("u_1");
      expect(await new PlanStore(second.database.db).userIdFor("b@example.com")).toBeNull();
    } finally {
      await second.database.close();
    }
  });

  it("buildAdminDeps gives the server's key store and account rules over a migrated database", async () => {
    const admin = await buildAdminDeps(configFor(tempDir()), logger);
    try {
      const created = await admin.keys.create({
        name: "ops",
        ownerId: null,
        permissions: [admin.config.KEY_PERMISSION],
        expiresAt: null,
        remaining: null,
        ratelimit: null,
      });
      expect((await admin.keys.list()).map((k) => k.id)).toEqual([created.id]);
      expect(await admin.keys.accounts.revoke(undefined, created.id, { only: true })).toEqual([created.id]);
    } finally {
      await admin.close();
    }
  });
});

describe(".env (process.loadEnvFile)", () => {
  const names = ["ALMANAC_ENVFILE_A", "ALMANAC_ENVFILE_B"];
  afterEach(() => {
    for (const n of names) delete process.env[n];
  });

  it("fills unset variables from the file; a variable already set wins; no file is no error", () => {
    const dir = tempDir();
    const path = join(dir, ".env");
    writeFileSync(path, "ALMANAC_ENVFILE_A=from-file\nALMANAC_ENVFILE_B=from-file\n");
    process.env.ALMANAC_ENVFILE_B = "from-env";
    loadDotenvFile(path);
    expect(process.env.ALMANAC_ENVFILE_A).toBe("from-file");
    expect(process.env.ALMANAC_ENVFILE_B).toBe("from-env");
    expect(() => loadDotenvFile(join(dir, "missing.env"))).not.toThrow();
  });
});
