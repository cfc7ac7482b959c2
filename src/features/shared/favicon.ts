import type { Hono } from "hono";
import type { AppEnv } from "../../http/types.js";

/** Where every page's `<link rel="icon">` points. */
export const FAVICON_PATH = "/favicon.svg";

/** A crescent moon on the brand's dark blue, drawn rather than shipped as a binary. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d3557"/><path d="M20.5 6.5a10 10 0 1 0 5 17.6A8.5 8.5 0 0 1 20.5 6.5z" fill="#f1faee"/></svg>`;

/**
 * The icon, and `/favicon.ico` (which browsers and crawlers ask for whatever the page says)
 * moved to it, so no page logs a 404.
 */
export function registerFavicon(app: Hono<AppEnv>): void {
  app.get(FAVICON_PATH, (c) =>
    c.body(FAVICON_SVG, 200, { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400" }),
  );
  app.get("/favicon.ico", (c) => c.redirect(FAVICON_PATH, 301));
}
