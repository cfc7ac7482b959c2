import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DATABASE_URL, freshPostgresUrl, tempDir } from "../helpers/env.js";

/** Every bad input ends as one `almanac: <message>` line on stderr and exit 1: never a stack trace. */
describe("almanac with bad input: one clear line, exit 1", () => {
  const dir = tempDir();
  const almanac = (...args: string[]) => runCli(args, { LOG_LEVEL: "silent", DATA_DIR: dir });
  const refused = async (args: string[], message: string | RegExp) => {
    const run = await almanac(...args);
    expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 1, stdout: "" });
    expect(run.stderr).toMatch(/^almanac: [^\n]+\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    if (typeof message === "string") expect(run.stderr).toContain(message);
    else expect(run.stderr).toMatch(message);
  };

  it("commander's own usage errors say almanac:, not error:", async () => {
    await refused(["--bogus"], "almanac: unknown option '--bogus'");
    await refused(["keys", "list", "--bogus"], "almanac: unknown option '--bogus'");
    await refused(["keys", "create"], "almanac: required option '--name <name>' not specified");
    await refused(["nosuch"], "almanac: unknown command 'nosuch'");
  });

  it("a file, CSV or database that fails is its message, not a stack trace", async () => {
    await refused(["data", "check", "--tedb", join(dir, "missing.csv")], /^almanac: .*ENOENT.*missing\.csv/);
    await refused(["data", "check", "--tedb", dir, "--json"], /EISDIR/);
    const notCsv = join(dir, "not.csv");
    writeFileSync(notCsv, 'a,b\n1,2,3\n"unclosed');
    await refused(["data", "check", "--tedb", notCsv], /^almanac: /);
    const down = await runCli(["migrate"], {
      LOG_LEVEL: "silent",
      DATA_DIR: dir,
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^almanac: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });

  it("numbers out of range are refused by name, before anything is stored", async () => {
    await refused(["keys", "create", "--name", "x", "--remaining", "99999999999999999999999"], "--remaining");
    await refused(["keys", "create", "--name", "x", "--remaining", "-5"], "--remaining");
    await refused(["keys", "roll", "key_x", "--grace", "99999999999999999999"], "--grace");
    await refused(["keys", "roll", "key_x", "--grace", "1e3"], "--grace");
    await refused(["contact", "list", "--limit", "99999999999999999999"], "--limit");
    await refused(["contact", "list", "--limit", "1e3"], "--limit");
    const listed = await almanac("keys", "list");
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});

/** A key's uses are an integer column on PostgreSQL: the CLI takes what both databases store, on both. */
describe.each([
  ["SQLite", false],
  ["PostgreSQL", true],
])("almanac keys --remaining at the column's limit (%s)", (_name, postgres) => {
  it.skipIf(postgres && !DATABASE_URL)("takes 2147483647 and refuses 2147483648, on create and on update", async () => {
    const pg = postgres ? await freshPostgresUrl() : undefined;
    const env = { LOG_LEVEL: "silent", DATA_DIR: tempDir(), ...(pg && { DATABASE_URL: pg.url }) };
    try {
      const almanac = (...args: string[]) => runCli(["keys", ...args], env);
      const made = await almanac("create", "--name", "big", "--remaining", "2147483647");
      expect(made.stderr).toBe("");
      const id = (JSON.parse(made.stdout) as { id: string; remaining: number }).id;
      expect(JSON.parse(made.stdout)).toMatchObject({ remaining: 2147483647 });
      for (const args of [
        ["create", "--name", "bigger", "--remaining", "2147483648"],
        ["update", id, "--remaining", "2147483648"],
      ]) {
        const run = await almanac(...args);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^almanac: .*--remaining.*2147483647/);
      }
      expect((await almanac("update", id, "--remaining", "2147483647")).code).toBe(0);
    } finally {
      await pg?.drop();
    }
  });
});

describe("almanac keys and plans refuse what the account page refuses", () => {
  const almanac = (...args: string[]) => runCli(args, { LOG_LEVEL: "silent", DATA_DIR: tempDir() });
  it("a key name is 1 to 64 printable characters; a new key's expiry is in the future; a plan goes to an e-mail address", async () => {
    for (const name of ["", "   ", "x".repeat(65), "evil\u202ename", "bell\u0007"]) {
      const run = await almanac("keys", "create", "--name", name);
      expect({ name, code: run.code, stderr: run.stderr }).toEqual({
        name,
        code: 1,
        stderr:
          "almanac: option '--name <name>' argument '" +
          name +
          "' is invalid. A key name is 1 to 64 printable characters.\n",
      });
    }
    const past = await almanac("keys", "create", "--name", "old", "--expires", "2020-01-01");
    expect(past).toMatchObject({ code: 1, stdout: "" });
    expect(past.stderr).toBe("almanac: --expires is in the past: a key created now would never work.\n");
    for (const email of ["notanemail", "", "a b@c.d"]) {
      const run = await almanac("plans", "grant", email, "pro");
      expect({ email, code: run.code, stderr: run.stderr }).toEqual({
        email,
        code: 1,
        stderr: `almanac: ${JSON.stringify(email)} is not an e-mail address.\n`,
      });
    }
  });
});

describe("almanac keys: empty or contradictory options", () => {
  it("refuses an empty --permission or --owner, and --permission with --no-permissions", async () => {
    const almanac = (...args: string[]) => runCli(["keys", ...args], { LOG_LEVEL: "silent", DATA_DIR: tempDir() });
    const cases: [string[], string][] = [
      [["create", "--name", "p", "--permission", ""], "--permission"],
      [["create", "--name", "p", "--permission", "a b"], "--permission"],
      [["create", "--name", "p", "--owner", ""], "--owner"],
      [["list", "--owner", " "], "--owner"],
      [["update", "key_x", "--permission", "a", "--no-permissions"], "--no-permissions"],
    ];
    for (const [args, option] of cases) {
      const run = await almanac(...args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(run.stderr).toMatch(/^almanac: [^\n]+\n$/);
      expect(run.stderr).toContain(option);
    }
  });
});
