import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PROPERTY_TESTS } from "../vitest.resilience.config.js";

const root = new URL("..", import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

describe("the suites' configuration", () => {
  it("runs every property test at full size in test:resilience (PROPERTY_TESTS lists each file that scales its cases)", () => {
    const calling = [...testFiles("src"), ...testFiles("test")]
      .filter((f) => /\b(propertyRuns|sampled)\(/.test(readFileSync(join(root, f), "utf8")))
      .sort();
    expect([...PROPERTY_TESTS].sort()).toEqual(calling);
  });
});
