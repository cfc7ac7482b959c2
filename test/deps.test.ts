import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testApp } from "./helpers/app.js";
import { tempDir } from "./helpers/env.js";

const mode = (path: string) => statSync(path).mode & 0o777;

describe("DATA_DIR is private to the server's user", () => {
  it("a new data directory is 0700 and everything in it 0600 (database, WAL, shared memory, auth secret)", async () => {
    const dir = join(tempDir(), "data");
    const t = await testApp({ DATA_DIR: dir });
    try {
      // A write, so SQLite has its -wal and -shm files; a sign-in page load creates the secret.
      await t.deps.keys.create({ name: "perm", permissions: ["vibe.classify"] });
      await t.app.request("/account");
      expect(mode(dir)).toBe(0o700);
      const files = readdirSync(dir);
      expect(files).toEqual(expect.arrayContaining(["almanac.db", "almanac.db-wal", "almanac.db-shm", "auth-secret"]));
      for (const f of files) expect([f, mode(join(dir, f))]).toEqual([f, 0o600]);
    } finally {
      await t.close();
    }
  });

  it("an existing database file with loose permissions is tightened to 0600", async () => {
    const dir = join(tempDir(), "old");
    mkdirSync(dir);
    writeFileSync(join(dir, "almanac.db"), "");
    chmodSync(join(dir, "almanac.db"), 0o644);
    const t = await testApp({ DATA_DIR: dir });
    await t.close();
    expect(mode(join(dir, "almanac.db"))).toBe(0o600);
  });
});
