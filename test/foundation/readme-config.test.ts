import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, parseConfig } from "../../src/config.js";

/**
 * The README's configuration table is a second copy of the config schema, kept by hand: the two
 * are held equal here — every variable the schema reads is documented, nothing else is, and
 * every default the table states as a literal is the default the schema applies.
 */
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

interface Row {
  names: string[];
  defaults: string[];
}

/** `GITHUB_CLIENT_ID/SECRET` → GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET. */
function expand(name: string): string[] {
  const [first = "", ...rest] = name.split("/");
  const stem = first.slice(0, first.lastIndexOf("_") + 1);
  return [first, ...rest.map((r) => stem + r)];
}

function configRows(): Row[] {
  const start = readme.indexOf("| variable ");
  expect(start, "the README has a configuration table").toBeGreaterThan(0);
  const rows: Row[] = [];
  for (const line of readme.slice(start).split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const [names = "", defaults = ""] = line.split("|").slice(1, 3);
    rows.push({
      names: [...names.matchAll(/`([A-Z0-9_/]+)`/g)].flatMap((m) => expand(m[1] ?? "")),
      defaults: defaults.split(/`,\s*`|,\s+/).map((d) => d.trim()),
    });
  }
  return rows;
}

describe("the README's configuration table", () => {
  const rows = configRows();
  const documented = rows.flatMap((r) => r.names);

  it("documents exactly the variables the config schema reads, each once", () => {
    expect([...documented].sort()).toEqual([...CONFIG_KEYS].sort());
  });

  it("states the schema's own default wherever it gives one as a literal", () => {
    const defaults = parseConfig({}) as unknown as Record<string, unknown>;
    let compared = 0;
    for (const row of rows) {
      if (row.names.length !== row.defaults.length) continue;
      row.names.forEach((name, i) => {
        const literal = /^`([^`]*)`/.exec(row.defaults[i] ?? "")?.[1];
        if (literal === undefined || literal.includes("$")) return;
        compared++;
        expect(String(defaults[name]), name).toBe(literal.startsWith("./") ? String(defaults[name]) : literal);
      });
    }
    expect(compared).toBeGreaterThan(20);
  });
});
