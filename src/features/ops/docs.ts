import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Hono } from "hono";
import type { AppEnv } from "../../http/types.js";

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Almanac API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/almanac.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<nav style="padding:.5rem 1.25rem;font:15px/1.4 system-ui,sans-serif;border-bottom:1px solid #d0d7de" aria-label="Almanac">
<a href="/">Almanac</a> · <strong>API reference</strong> · <a href="/account">Get an API key</a> · <a href="/v1/openapi.json">openapi.json</a>
</nav>
<main id="reference"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;

// Almanac's overrides of Swagger UI's stylesheet: every text at 4.5:1 or more on its background,
// nothing wider than a phone. Light in both colour schemes (Swagger UI has no dark theme).
const THEME = `:root { color-scheme: light; }
.swagger-ui .info .title small pre.version { background: #5c6370; }
.swagger-ui .info .title small.version-stamp { background: #3d6b00; }
.swagger-ui .info a, .swagger-ui .info .link, .swagger-ui a.nostyle:visited { color: #1f5fa8; }
.swagger-ui .btn.authorize { color: #1b7a4d; border-color: #1b7a4d; }
.swagger-ui .btn.authorize svg { fill: #1b7a4d; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1f5fa8; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #1b7a4d; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #8a4b00; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0b6e5a; }
.swagger-ui .btn.try-out__btn.cancel, .swagger-ui .btn.cancel { color: #b3261e; border-color: #b3261e; }
.swagger-ui .parameter__in, .swagger-ui .parameter__deprecated { color: #595959; }
.swagger-ui .btn.execute { background: #1f5fa8; border-color: #1f5fa8; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #4a4a4a; }
.swagger-ui .response-col_links { display: none; }
.swagger-ui .download-contents { background: #5c6370; }
.swagger-ui td, .swagger-ui .header-example { overflow-wrap: anywhere; }
.swagger-ui table.headers .header-example { color: #595959; }
.swagger-ui table.headers { table-layout: fixed; width: 100%; }
.swagger-ui pre, .swagger-ui .microlight { white-space: pre-wrap; overflow-wrap: anywhere; }
`;

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
    // BaseLayout: no top bar (its URL box is unlabelled and its colours fail contrast), and no
    // 268 kB standalone preset. No syntax colouring: its inline colours fail 4.5:1.
    layout: "BaseLayout",
    syntaxHighlight: false,
    // No call to the public validator.swagger.io badge: the page works offline and leaks nothing.
    validatorUrl: null,
  });
  const reference = document.getElementById("reference");
  new MutationObserver(() => fixUp(reference)).observe(reference, { childList: true, subtree: true });
  fixUp(reference);
});

// What Swagger UI leaves without a name or out of reach of a keyboard, set after each render.
function fixUp(root) {
  for (const el of root.querySelectorAll("select, textarea, input")) {
    if (el.hasAttribute("aria-label")) continue;
    const param = el.closest("[data-param-name]");
    const label = el.id === "servers" ? "Server"
      : el.classList.contains("examples-select-element") ? "Example"
      : el.tagName === "TEXTAREA" ? (el.closest(".responses-wrapper") ? "Response body" : "Request body")
      : param ? param.getAttribute("data-param-name")
      : el.getAttribute("placeholder") || el.getAttribute("title");
    if (label) el.setAttribute("aria-label", label);
  }
  // The path inside each operation's toggle button is also a link: one control is enough (the
  // toggle updates the address as the link would).
  for (const a of root.querySelectorAll(".opblock-summary-control a[href]")) a.removeAttribute("href");
  for (const pre of root.querySelectorAll("pre")) if (!pre.hasAttribute("tabindex")) pre.setAttribute("tabindex", "0");
}`;

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
    if (file === "almanac.css") return c.body(THEME, 200, { "Content-Type": "text/css; charset=utf-8" });
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
