// Runs dependency-cruiser (the house rules in .dependency-cruiser.cjs) with `npm run check`.
// dependency-cruiser reads TypeScript through the TypeScript 5 compiler API, and this project's
// `typescript` is 7 (a native compiler with no JavaScript API), so the `typescript5` package (an
// alias of typescript@5) stands in for `typescript` inside dependency-cruiser only: for its
// require() of the manifest (the version check) and for its import() of the compiler.
import Module, { createRequire, register } from "node:module";

const require = createRequire(import.meta.url);
const fromCruiser = (parent) => typeof parent === "string" && parent.includes("/dependency-cruiser/");
const aliased = (request) => request.replace(/^typescript(?=$|\/)/, "typescript5");

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const swap = fromCruiser(parent?.filename) && /^typescript($|\/)/.test(request);
  return resolveFilename.call(this, swap ? aliased(request) : request, parent, ...rest);
};

const typescript5 = new URL(`file://${require.resolve("typescript5")}`).href;
const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === "typescript" && (context.parentURL ?? "").includes("/dependency-cruiser/"))
    return { url: ${JSON.stringify(typescript5)}, format: "commonjs", shortCircuit: true };
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

process.argv.splice(2, 0, "src", "--config", ".dependency-cruiser.cjs");
await import(new URL("../node_modules/dependency-cruiser/bin/dependency-cruise.mjs", import.meta.url).href);
