// The house rules, kept by `npm run check` (dependency-cruiser): the README's code tour lists them.
// Type-only imports count (tsPreCompilationDeps), so a type can no more make a cycle than a value.
/** The composition root (deps.ts, app.ts, admin.ts, main.ts, server.ts, cluster.ts) and the CLI. */
const COMPOSITION_ROOT = ["^src/(deps|app|admin|main|server|cluster)\\.ts$", "^src/cli/"];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "No module reaches itself again through its imports (type-only imports included).",
      from: {},
      to: { circular: true },
    },
    {
      name: "feature-public-face",
      severity: "error",
      comment:
        "A feature imports another feature only through its public face (src/features/NAME/index.ts); " +
        "features/shared is the shared toolbox, not a feature.",
      from: { path: "^src/features/([^/]+)/" },
      to: {
        path: "^src/features/[^/]+/",
        pathNot: ["^src/features/$1/", "^src/features/shared/", "^src/features/[^/]+/index\\.ts$"],
      },
    },
    {
      name: "feature-no-adapters",
      severity: "error",
      comment: "Features depend on ports (src/ports), never on an adapter; the composition root picks adapters.",
      from: { path: "^src/features/" },
      to: { path: "^src/adapters/" },
    },
    {
      name: "feature-no-composition-root",
      severity: "error",
      comment:
        "Features do not import the composition root (deps.ts, app.ts, main.ts, server.ts, cluster.ts) nor the CLI; " +
        "AppDeps lives beside the ports (src/app-deps.ts, beside the ports).",
      from: { path: "^src/features/" },
      to: { path: COMPOSITION_ROOT },
    },
    {
      name: "http-no-composition-root",
      severity: "error",
      comment:
        "The HTTP edge (src/http) takes what it needs as arguments (a Pick of AppDeps, from src/app-deps.ts); " +
        "it never imports the composition root (deps.ts, app.ts, admin.ts, main.ts, server.ts, cluster.ts) nor the CLI.",
      from: { path: "^src/http/" },
      to: { path: COMPOSITION_ROOT },
    },
    {
      name: "domain-errors-are-values",
      severity: "error",
      comment:
        "These domain modules return their expected failures as values (src/lib/result.ts); the routes and " +
        "the CLI map them. They import nothing from the HTTP edge (ApiError is thrown only there).",
      from: {
        path: [
          "^src/features/postcode/lookup\\.ts$",
          "^src/features/weather/forecast\\.ts$",
          "^src/features/keys/account-keys\\.ts$",
          "^src/features/shared/idempotency\\.ts$",
        ],
      },
      to: { path: "^src/http/" },
    },
    {
      name: "app-deps-holds-ports",
      severity: "error",
      comment:
        "AppDeps (src/app-deps.ts) holds ports and services by their port interfaces (src/ports): features import it, " +
        "so it imports nothing from a feature (no arrow back up).",
      from: { path: "^src/app-deps\\.ts$" },
      to: { path: "^src/features/" },
    },
    {
      name: "ports-are-leaves",
      severity: "error",
      comment: "Ports do not import adapters or the composition root.",
      from: { path: "^src/ports/" },
      to: { path: ["^src/adapters/", ...COMPOSITION_ROOT] },
    },
    {
      name: "one-sqlite-driver",
      severity: "error",
      comment:
        "Only src/db/sqlite.ts loads better-sqlite3: it picks 13 (Node-API) or 12 by the running Node; " +
        "a direct import would load 12 on Node 24 (aborts) or 13 on Node 20 (crashes).",
      from: { pathNot: "^src/db/sqlite\\.ts$" },
      to: { path: "(^|/)node_modules/(@types/)?better-sqlite3(-napi)?/|^better-sqlite3(-napi)?$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.tsx?$|\\.fixture\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".js", ".d.ts"],
    },
  },
};
