/**
 * The client check: the served /v1/openapi.json through three generators
 * (openapi-typescript + openapi-fetch, @hey-api/openapi-ts, orval), then `tsc --strict` over a
 * program per generator that calls every operation and branches on every declared status (and,
 * where the generator types them, names every declared response header and checks X-Request-Id
 * is required). The generators live outside the repository, in DIR:
 *
 *   mkdir -p DIR && (cd DIR && npm init -y && npm install openapi-typescript openapi-fetch @hey-api/openapi-ts orval typescript)
 *   node scripts/check-generators.mjs DIR
 *
 * Exits non-zero when a generator fails or a program does not compile.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";

const dir = resolvePath(process.argv[2] ?? "");
if (!process.argv[2]) {
  console.error("usage: node scripts/check-generators.mjs DIR (see the comment at the top)");
  process.exit(2);
}
const bin = (name) => join(dir, "node_modules", ".bin", name);
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
};

execFileSync(process.execPath, ["--import", "tsx", "scripts/openapi-dump.ts", join(dir, "doc.json")], {
  stdio: "inherit",
});
const doc = JSON.parse(readFileSync(join(dir, "doc.json"), "utf8"));
for (const d of ["ot", "hey", "orval", "prog"]) rmSync(join(dir, d), { recursive: true, force: true });
mkdirSync(join(dir, "prog"));
const schemas = doc.components.schemas;
const resolve = (s) => (s?.$ref ? resolve(schemas[s.$ref.split("/").pop()]) : (s ?? {}));
function sample(raw) {
  const s = resolve(raw);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.example !== undefined && !(s.type === "array" && !Array.isArray(s.example))) return s.example;
  if (s.anyOf || s.oneOf) return sample((s.anyOf ?? s.oneOf)[0]);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return [sample(s.items)];
    case "object":
      return Object.fromEntries((s.required ?? []).map((k) => [k, sample(s.properties[k])]));
    default:
      return "x";
  }
}
const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op })),
);
const statusesOf = (op) => Object.keys(op.responses);
const numeric = (op) => statusesOf(op).filter((s) => s !== "default");
const q = (op, where) =>
  Object.fromEntries(
    (op.parameters ?? [])
      .filter((p) => p.in === where && (p.required || where === "query"))
      .map((p) => [p.name, sample(p.schema)]),
  );
const bodyOf = (op) => op.requestBody && sample(op.requestBody.content["application/json"].schema);
const nonEmpty = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => Object.keys(v).length > 0));
const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const J = JSON.stringify;

// openapi-typescript + openapi-fetch
{
  let src =
    `import createClient from "openapi-fetch";\nimport type { paths } from "../ot/schema";\n` +
    `const client = createClient<paths>({ baseUrl: "https://almanac.example", headers: { Authorization: "Bearer alm_x" } });\n` +
    `type Required<T, K extends keyof T> = {} extends Pick<T, K> ? false : true;\nconst yes = <T extends true>(_t?: T) => {};\nexport async function all(): Promise<void> {\n`;
  for (const { path, method, op } of ops) {
    const M = method.toUpperCase();
    const params = nonEmpty({ query: q(op, "query"), header: q(op, "header") });
    const b = bodyOf(op);
    const p = Object.keys(params).length ? `params: ${J(params)}` : "";
    src += `  {\n    const r = await client.${M}(${J(path)}, { ${[p, b !== undefined ? `body: ${J(b)}` : ""].filter(Boolean).join(", ")} });\n`;
    src += `    type R = paths[${J(path)}][${J(method)}]["responses"];\n`;
    src += `    switch (r.response.status) {\n`;
    for (const s of numeric(op)) {
      const content = op.responses[s].content ? `R[${s}]["content"]["application/json"]` : "never";
      src += `      case ${s}: {\n`;
      if (op.responses[s].content)
        src += `        const body: ${content} | undefined = ${Number(s) < 300 ? "r.data" : "r.error"}; void body;\n`;
      if (Number(s) >= 400) src += `        const code: string | undefined = r.error?.error.code; void code;\n`;
      for (const h of Object.keys(op.responses[s].headers ?? {}))
        src += `        type H_${h.replace(/\W/g, "_")} = R[${s}]["headers"][${J(h)}];\n`;
      src += `        yes<Required<R[${s}]["headers"], "X-Request-Id">>();\n        break;\n      }\n`;
    }
    src += `      default: {\n        const e: R["default"]["content"]["application/json"] | undefined = r.error; void e;\n      }\n    }\n  }\n`;
  }
  writeFileSync(`${dir}/prog/ot.ts`, `${src}}\n`);
}

// @hey-api/openapi-ts (its default fetch client)
{
  const names = ops.map(({ op }) => op.operationId);
  let src =
    `import { ${names.join(", ")} } from "../hey/sdk.gen";\nimport type { ${names.flatMap((n) => [`${cap(n)}Errors`, `${cap(n)}Responses`]).join(", ")} } from "../hey/types.gen";\n` +
    `export async function all(): Promise<void> {\n`;
  for (const { op } of ops) {
    const n = op.operationId;
    const N = cap(n);
    const opts = nonEmpty({ query: q(op, "query"), headers: { Authorization: "Bearer alm_x", ...q(op, "header") } });
    const b = bodyOf(op);
    src += `  {\n    const r = await ${n}({ ...${J(opts)}${b !== undefined ? `, body: ${J(b)}` : ""} });\n`;
    src += `    switch (r.response?.status) {\n`;
    for (const s of numeric(op)) {
      const has = op.responses[s].content;
      const T = Number(s) < 300 ? `${N}Responses[${s}]` : `${N}Errors[${s}]`;
      src += `      case ${s}: {\n`;
      if (has)
        src += `        const body: ${T} | undefined = ${Number(s) < 300 ? "r.data" : `r.error as ${T} | undefined`}; void body;\n`;
      if (has && Number(s) >= 400)
        src += `        const code: string | undefined = (r.error as ${T} | undefined)?.error.code; void code;\n`;
      src += `        break;\n      }\n`;
    }
    src += `      default: {\n        const e: ${N}Errors["default"] | undefined = r.error as ${N}Errors["default"] | undefined; void e;\n      }\n    }\n  }\n`;
  }
  writeFileSync(`${dir}/prog/hey.ts`, `${src}}\n`);
}

// orval (fetch client)
{
  const names = ops.map(({ op }) => op.operationId);
  const types = ops.flatMap(({ op }) => numeric(op).map((s) => `${op.operationId}Response${s}`));
  let src =
    `import { ${names.join(", ")} } from "../orval/api";\nimport type { ${types.join(", ")} } from "../orval/api";\n` +
    `export async function all(): Promise<void> {\n  const init = { headers: { Authorization: "Bearer alm_x" } };\n`;
  for (const { op } of ops) {
    const n = op.operationId;
    const b = bodyOf(op);
    const query = q(op, "query");
    // orval's order: the body, then the query parameters (when the operation has any), then init.
    const args = [...(b !== undefined ? [J(b)] : []), ...(Object.keys(query).length ? [J(query)] : []), "init"].join(
      ", ",
    );
    src += `  {\n    const r = await ${n}(${args});\n    switch (r.status) {\n`;
    for (const s of numeric(op)) {
      src += `      case ${s}: {\n        const body: ${n}Response${s}["data"] = r.data; void body;\n`;
      if (Number(s) >= 400 && op.responses[s].content)
        src += `        const code: string = r.data.error.code; void code;\n`;
      src += `        break;\n      }\n`;
    }
    src += `      default: {\n        const e = r.data.error.code; void e;\n      }\n    }\n  }\n`;
  }
  writeFileSync(`${dir}/prog/orval.ts`, `${src}}\n`);
}

let failed = 0;
const steps = [
  ["openapi-typescript", bin("openapi-typescript"), ["doc.json", "-o", "ot/schema.d.ts"]],
  ["@hey-api/openapi-ts", bin("openapi-ts"), ["-i", "doc.json", "-o", "hey"]],
  [
    "orval",
    bin("orval"),
    ["--input", "./doc.json", "--output", "./orval/api.ts", "--client", "fetch", "--mode", "single"],
  ],
];
for (const [name, cmd, args] of steps) {
  const r = run(cmd, args);
  if (!r.ok) {
    failed++;
    console.error(`${name}: generation failed\n${r.out}`);
  }
}
const compilerOptions = {
  strict: true,
  noEmit: true,
  target: "ES2022",
  module: "ESNext",
  moduleResolution: "Bundler",
  lib: ["ES2022", "DOM"],
  skipLibCheck: true,
};
for (const p of ["ot", "hey", "orval"]) {
  writeFileSync(join(dir, `tsconfig.${p}.json`), JSON.stringify({ compilerOptions, files: [`prog/${p}.ts`] }));
  const r = run(bin("tsc"), ["-p", `tsconfig.${p}.json`]);
  console.log(`${p}: ${r.ok ? "tsc --strict clean" : "tsc --strict FAILED"}`);
  if (!r.ok) {
    failed++;
    console.error(r.out);
  }
}
process.exit(failed === 0 ? 0 : 1);
