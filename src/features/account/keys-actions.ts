import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import type { CreatedKey } from "../../ports/key-store.js";
import { keyRefusalError } from "../keys/index.js";
import type { AccountContext } from "./context.js";
import { csrfToken } from "./csrf.js";
import { type KeyFlash, setKeyFlash } from "./flash.js";
import { field } from "./http.js";
import { expiryChoice, keyName, parseKeyEdit, permissionsOf } from "./key-edit.js";
import { EditKeyPage } from "./key-edit-view.jsx";
import { ConfirmKeyPage, GRACE_CHOICES, livePair } from "./keys-views.jsx";

type Session = { user: { id: string; email: string }; session: { id: string } };

export interface KeyActionHelpers {
  /** Same origin, live session, CSRF token; returns the session and the form. */
  guard(c: Context<AppEnv>): Promise<{ s: Session; body: Record<string, unknown> }>;
  session(c: Context<AppEnv>): Promise<Session | null>;
}

/**
 * Key create / roll / revoke / update on the account page, Post/Redirect/Get: each POST answers
 * 303 to `/account`, the new key travels in a one-read encrypted cookie (flash.ts), so a reload
 * never repeats the action. Roll and revoke are confirmed on their own GET page first.
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
    const name = keyName(body);
    const expiresAt = expiryChoice(body, deps.now().getTime());
    const allowed = [deps.config.KEY_PERMISSION];
    const permissions = permissionsOf(body, allowed, allowed) ?? allowed;
    const created = await deps.keys.accounts.create({
      ownerId: s.user.id,
      email: s.user.email,
      name,
      permissions,
      expiresAt,
    });
    if (!created.ok) throw keyRefusalError(created.error);
    return redirectWithKey(c, s, created.value, "created");
  });

  for (const action of ["roll", "revoke"] as const) {
    app.get(`/account/keys/:id/${action}`, async (c) => {
      const s = await h.session(c);
      if (!s) return c.redirect("/account", 303);
      const id = c.req.param("id");
      const all = await deps.keys.accounts.overview(s.user.id);
      const k = all.find((x) => x.id === id);
      if (!k) throw new ApiError("not_found", `No key ${id} on this account.`);
      const pair = livePair(k, all);
      return c.html(ConfirmKeyPage({ action, k, pair, csrf: csrfToken(ctx.secret, s.session.id) }));
    });
  }

  app.get("/account/keys/:id/edit", async (c) => {
    const s = await h.session(c);
    if (!s) return c.redirect("/account", 303);
    const id = c.req.param("id");
    const k = (await deps.keys.accounts.overview(s.user.id)).find((x) => x.id === id && x.status !== "revoked");
    // The overview's `remaining` is what the key can still spend (its own uses or the account's,
    // the fewer); the form edits its own, as the key store holds them.
    const own = (await deps.keys.list(s.user.id)).find((x) => x.id === id);
    if (!k || !own) throw new ApiError("not_found", `No key ${id} on this account.`);
    const csrf = csrfToken(ctx.secret, s.session.id);
    return c.html(
      EditKeyPage({
        k: { ...k, remaining: own.remaining, ratelimit: own.ratelimit },
        csrf,
        permission: deps.config.KEY_PERMISSION,
      }),
    );
  });

  // Revokes the key and the other key of its roll, unless the form says `only=1`.
  app.post("/account/keys/:id/revoke", async (c) => {
    const { s, body } = await h.guard(c);
    const id = c.req.param("id");
    if (!(await deps.keys.accounts.revoke(s.user.id, id, { only: field(body, "only") === "1" })))
      throw new ApiError("not_found", `No key ${id} on this account.`);
    return c.redirect("/account?notice=revoked", 303);
  });

  // Changes a key within the plan; fields left out of the form stay as they are.
  app.post("/account/keys/:id/update", async (c) => {
    const { s, body } = await h.guard(c);
    const id = c.req.param("id");
    // A revoked key has no edit page (404): its form is refused the same way, nothing is written.
    const k = (await deps.keys.accounts.overview(s.user.id)).find((x) => x.id === id);
    if (!k || k.status === "revoked") throw new ApiError("not_found", `No key ${id} on this account.`);
    // A form that does not parse comes back as the form, with what was typed and why (400).
    const refused = async (err: ApiError) => {
      const own = (await deps.keys.list(s.user.id)).find((x) => x.id === id);
      const typed = {
        name: field(body, "name"),
        remaining: field(body, "remaining"),
        ratelimit: field(body, "ratelimit"),
      };
      const page = EditKeyPage({
        k: { ...k, remaining: own?.remaining ?? null, ratelimit: own?.ratelimit ?? null },
        csrf: csrfToken(ctx.secret, s.session.id),
        permission: deps.config.KEY_PERMISSION,
        error: err.message,
        typed,
      });
      return c.html(page, 400);
    };
    let patch: ReturnType<typeof parseKeyEdit>;
    try {
      patch = parseKeyEdit(body, [deps.config.KEY_PERMISSION], deps.now().getTime());
    } catch (err) {
      if (err instanceof ApiError && err.code === "invalid_body") return refused(err);
      throw err;
    }
    const updated = await deps.keys.accounts.update(s.user.id, id, patch);
    if (!updated.ok) {
      if (updated.error.kind === "not_found") throw new ApiError("not_found", `No key ${id} on this account.`);
      throw keyRefusalError(updated.error);
    }
    return c.redirect("/account?notice=updated", 303);
  });

  app.post("/account/keys/:id/roll", async (c) => {
    const { s, body } = await h.guard(c);
    const id = c.req.param("id");
    const grace = GRACE_CHOICES.find((g) => g.value === (field(body, "grace") || "0"));
    if (!grace) throw new ApiError("invalid_body", "Choose a grace period from the list.");
    const rolled = await deps.keys.accounts.roll(s.user.id, id, grace.seconds);
    if (!rolled.ok) {
      if (rolled.error.kind === "not_found") throw new ApiError("not_found", `No active key ${id} on this account.`);
      throw keyRefusalError(rolled.error);
    }
    return redirectWithKey(c, s, rolled.value, "rolled");
  });
}
