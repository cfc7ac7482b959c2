import type { Context, MiddlewareHandler, Next } from "hono";

/**
 * One naming scheme for the lookups' query parameters — `lat`, `lon`, `tz` — with the other
 * spellings clients reach for accepted as aliases: `latitude`, `longitude`, `timezone`,
 * `time_zone`. An alias is rewritten to its canonical name before validation (so errors name the
 * canonical parameter); when both are sent, the canonical one wins and the alias is dropped.
 */
export const QUERY_ALIASES: Readonly<Record<string, string>> = {
  latitude: "lat",
  longitude: "lon",
  timezone: "tz",
  time_zone: "tz",
};

/** Cheap pre-check on the raw query: only one that names an alias (or may, percent-encoded) is parsed. */
const MAYBE_ALIAS = new RegExp(`${Object.keys(QUERY_ALIASES).join("|")}|%`);

export function queryAliases(): MiddlewareHandler {
  return (c, next) => {
    // Every /v1 request passes here: most carry no alias, and need no URL parsed (nor a promise).
    const q = c.req.url.indexOf("?");
    if (q === -1 || !MAYBE_ALIAS.test(c.req.url.slice(q))) return next();
    return rewrite(c, next);
  };
}

async function rewrite(c: Context, next: Next): Promise<void> {
  const url = new URL(c.req.url);
  let changed = false;
  for (const [alias, canonical] of Object.entries(QUERY_ALIASES)) {
    if (!url.searchParams.has(alias)) continue;
    const values = url.searchParams.getAll(alias);
    url.searchParams.delete(alias);
    if (!url.searchParams.has(canonical)) for (const v of values) url.searchParams.append(canonical, v);
    changed = true;
  }
  if (changed) c.req.raw = new Request(url, c.req.raw);
  await next();
}
