import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Hono } from "hono";
import type { AppEnv } from "../../http/types.js";

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Almanac API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<nav style="padding:.5rem 1.25rem;font:15px/1.4 system-ui,sans-serif;border-bottom:1px solid #d0d7de" aria-label="Almanac">
<a href="/">Almanac</a> · <strong>API reference</strong> · <a href="/account">Get an API key</a> · <a href="/v1/openapi.json">openapi.json</a>
</nav>
<main id="reference"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;

// "Try it out" calls the host that served this page: the document's relative server goes first here
// (the document lists PUBLIC_URL first, for generated clients). Swagger UI fills each field with its
// example; an optional parameter starts empty instead, so a try answers with the server's default
// (VAT today, not the example's 2020 date) and never replays one Idempotency-Key for other texts.
// The document itself keeps the examples for generated clients and readers.
const INIT = `fetch("/v1/openapi.json").then((r) => r.json()).then((spec) => {
  const relative = (s) => s.url === "/";
  spec.servers = [...spec.servers.filter(relative), ...spec.servers.filter((s) => !relative(s))];
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item)) {
      for (const p of (op && op.parameters) || []) {
        if (p.required) continue;
        delete p.example;
        delete p.examples;
        if (p.schema) delete p.schema.example;
      }
    }
  }
  window.ui = SwaggerUIBundle({
    spec,
    dom_id: "#reference",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout",
    // No call to the public validator.swagger.io badge: the page works offline and leaks nothing.
    validatorUrl: null,
  });
});`;

/** `GET /docs`: interactive reference (Swagger UI), every asset served by this server. */
export function registerDocs(app: Hono<AppEnv>): void {
  // Only the path helper: the package's index evaluates the whole 1.5 MB browser bundle in Node
  // (about 40 MB of RSS and most of a second of start-up).
  const dir = (createRequire(import.meta.url)("swagger-ui-dist/absolute-path.js") as () => string)();
  const cache = new Map<string, Buffer>();
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'";

  app.get("/docs", (c) => {
    c.header("Content-Security-Policy", csp);
    return c.html(PAGE);
  });
  app.get("/docs/init.js", (c) => c.body(INIT, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get("/docs/assets/:file", async (c) => {
    const file = c.req.param("file");
    const type = ASSETS[file];
    if (!type) return c.notFound();
    let data = cache.get(file);
    if (!data) {
      data = await readFile(join(dir, file));
      cache.set(file, data);
    }
    return c.body(new Uint8Array(data), 200, { "Content-Type": type, "Cache-Control": "public, max-age=86400" });
  });
}
