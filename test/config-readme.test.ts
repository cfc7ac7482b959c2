import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, parseConfig } from "../src/config.js";

/**
 * The README's configuration table is a second copy of the config schema, kept by hand: the two
 * are held equal here — every variable the schema reads is documented, nothing else is, and
 * every variable's stated default is the one the schema applies: a literal, or `unset`.
 */
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

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
      defaults: defaults.split(/,\s+/).map((d) => d.trim()),
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

  it("states the schema's own default for every variable: a literal, or unset", () => {
    const defaults = parseConfig({}) as unknown as Record<string, unknown>;
    const compared: string[] = [];
    for (const row of rows) {
      // One default per name, or one for all of them (`unset` for a pair of credentials).
      expect(row.defaults.length === row.names.length || row.defaults.length === 1, row.names.join(", ")).toBe(true);
      row.names.forEach((name, i) => {
        const cell = row.defaults[row.defaults.length === 1 ? 0 : i] ?? "";
        const literal = /^`([^`]*)`/.exec(cell)?.[1];
        compared.push(name);
        if (literal === undefined) {
          // Not a value: unset (AUTH_SECRET's is made on first start, outside parseConfig).
          expect(cell, name).toMatch(/^(unset|generated into `DATA_DIR`)$/);
          expect(defaults[name], name).toBeUndefined();
        } else if (name === "PUBLIC_URL") {
          expect(defaults[name], name).toBe(literal.replace("$PORT", String(defaults.PORT)));
        } else {
          expect(String(defaults[name]), name).toBe(literal.startsWith("./") ? resolve(literal) : literal);
        }
      });
    }
    expect(compared.sort()).toEqual([...CONFIG_KEYS].sort());
  });
});
