import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { CreatedKey } from "../../ports/key-store.js";
import { csrfToken } from "./csrf.js";
import { type KeyFlash, setKeyFlash } from "./flash.js";
import { field } from "./http.js";
import { ConfirmKeyPage, EXPIRY_CHOICES, GRACE_CHOICES } from "./keys-views.jsx";
import type { AccountContext } from "./route.js";

type Session = { user: { id: string; email: string }; session: { id: string } };

export interface KeyActionHelpers {
  /** Same origin, live session, CSRF token; returns the session and the form. */
  guard(c: Context<AppEnv>): Promise<{ s: Session; body: Record<string, unknown> }>;
  session(c: Context<AppEnv>): Promise<Session | null>;
}

const DAY_MS = 86_400_000;

/**
 * Key create / roll / revoke on the account page, Post/Redirect/Get: each POST answers 303 to
 * `/account`, the new key travels in a one-read encrypted cookie (flash.ts), so a reload never
 * repeats the action. Roll and revoke are confirmed on their own GET page first.
 */
export function registerKeyActions(app: OpenAPIHono<AppEnv>, ctx: AccountContext, h: KeyActionHelpers): void {
  const { deps } = ctx;
  const secure = ctx.publicOrigin.startsWith("https:");

  const redirectWithKey = (c: Context<AppEnv>, s: Session, created: CreatedKey, kind: KeyFlash["kind"]) => {
    setKeyFlash(c, ctx.secret, s.session.id, { id: created.id, name: created.name, key: created.key, kind }, secure);
    return c.redirect(`/account?notice=${kind}`, 303);
  };

  app.post("/account/keys", async (c) => {
    const { s, body } = await h.guard(c);
    const name = field(body, "name").trim();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (name.length < 1 || name.length > 64 || /[\u0000-\u001f\u007f]/.test(name)) {
      throw new ApiError("invalid_body", "A key name is 1 to 64 printable characters.");
    }
    const expiry = EXPIRY_CHOICES.find((e) => e.value === (field(body, "expires") || "never"));
    if (!expiry) throw new ApiError("invalid_body", "Choose an expiry from the list.");
    // The form marks that it offered the boxes: unticked then means "no permission" (a lookups-only
    // key); a form without the marker gets the default permission.
    const offered = field(body, "permissions_offered") === "1";
    const wanted = offered ? ([] as unknown[]).concat(body.permission ?? []) : [deps.config.KEY_PERMISSION];
    const allowed = [deps.config.KEY_PERMISSION];
    if (wanted.some((p) => typeof p !== "string" || !allowed.includes(p))) {
      throw new ApiError("invalid_body", `Unknown permission: choose from ${allowed.join(", ")}.`);
    }
    const created = await deps.accountKeys.create({
      ownerId: s.user.id,
      email: s.user.email,
      name,
      permissions: wanted as string[],
      expiresAt: expiry.days === null ? null : new Date(Date.now() + expiry.days * DAY_MS).toISOString(),
    });
    return redirectWithKey(c, s, created, "created");
  });

  const ownKey = async (s: Session, id: string) => {
    const k = (await deps.accountKeys.overview(s.user.id)).find((x) => x.id === id);
    if (!k) throw new ApiError("not_found", `No key ${id} on this account.`);
    return k;
  };

  for (const action of ["roll", "revoke"] as const) {
    app.get(`/account/keys/:id/${action}`, async (c) => {
      const s = await h.session(c);
      if (!s) return c.redirect("/account", 303);
      const k = await ownKey(s, c.req.param("id"));
      return c.html(ConfirmKeyPage({ action, k, csrf: csrfToken(ctx.secret, s.session.id) }));
    });
  }

  app.post("/account/keys/:id/revoke", async (c) => {
    const { s } = await h.guard(c);
    const id = c.req.param("id");
    if (!(await deps.accountKeys.revoke(s.user.id, id)))
      throw new ApiError("not_found", `No key ${id} on this account.`);
    return c.redirect("/account?notice=revoked", 303);
  });

  app.post("/account/keys/:id/roll", async (c) => {
    const { s, body } = await h.guard(c);
    const id = c.req.param("id");
    const grace = GRACE_CHOICES.find((g) => g.value === (field(body, "grace") || "0"));
    if (!grace) throw new ApiError("invalid_body", "Choose a grace period from the list.");
    const created = await deps.accountKeys.roll(s.user.id, id, grace.seconds);
    if (!created) throw new ApiError("not_found", `No active key ${id} on this account.`);
    return redirectWithKey(c, s, created, "rolled");
  });
}
