import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { validationError } from "../../http/validation.js";
import { sha256Hex } from "../../lib/hash.js";
import { once } from "../shared/idempotency.js";
import { deliverContact } from "./deliver.js";
import { spendContactLimits } from "./limits.js";
import { contactErrorResponses, contactLimitHeaders } from "./openapi.js";
import { ContactRequest, ContactSent, IdempotencyHeader } from "./schema.js";
import { ContactStore } from "./store.js";
import { contactValidationError } from "./validation.js";

const SCOPE = "contact";

const route = createRoute({
  method: "post",
  path: "/v1/mail/contact",
  tags: ["Contact desk"],
  summary: "Send a message to the contact desk",
  description:
    "No API key needed. The message is stored before it is sent, then mailed from the server's fixed " +
    "sender (`MAIL_FROM`) to the desk inbox (`CONTACT_TO`); the sender's address is used only as the " +
    "Reply-To. Name, e-mail and subject must be single lines (CR, LF, U+0085, U+2028, U+2029 are refused). " +
    "Limited per client IP (`CONTACT_HOURLY_LIMIT`, default 5 per hour) and by a global daily cap " +
    "(`CONTACT_DAILY_CAP`). Send `Idempotency-Key` to retry safely.",
  request: {
    headers: IdempotencyHeader,
    body: { required: true, content: { "application/json": { schema: ContactRequest } } },
  },
  responses: {
    200: {
      description: "The message was stored and accepted by the mail server.",
      headers: {
        ...contactLimitHeaders,
        "Idempotent-Replayed": {
          description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
          schema: { type: "string" as const, example: "true" },
        },
      },
      content: { "application/json": { schema: ContactSent } },
    },
    ...contactErrorResponses,
  },
});

/** POST /v1/mail/contact: the contact desk. */
export function registerContact(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const store = new ContactStore(deps.database.db, deps.now);
  app.openapi(
    route,
    async (c) => {
      const body = c.req.valid("json");
      const idemKey = c.req.valid("header")["idempotency-key"];
      const lane = deps.mail;
      if (!lane) throw new ApiError("unavailable", "No mail lane is configured on this server.");

      const input = { ...body, clientIp: c.get("clientIp"), idempotencyKey: idemKey };
      const send = async () => {
        const limitHeaders = await spendContactLimits(deps.limiter, deps.config, c.get("clientIp"));
        // A client retry (same key and content) after a failed send resends the stored row.
        const earlier = idemKey ? await store.failedForRetry(idemKey, input) : undefined;
        const row = (earlier && (await store.claimRetry(earlier))) ?? (await store.create(input));
        const result = await deliverContact(store, lane, deps.config.CONTACT_TO, row);
        if (!result.ok) {
          throw new ApiError(
            "upstream_error",
            "The mail server refused the message; it has been stored for the operator to resend.",
            { details: { id: row.id }, headers: limitHeaders },
          );
        }
        return { body: { id: row.id, status: "sent" as const }, headers: limitHeaders };
      };
      if (!idemKey) {
        const { body: answer, headers } = await send();
        return c.json(answer, 200, headers);
      }
      const bodyHash = sha256Hex(JSON.stringify([body.name, body.email, body.subject ?? null, body.message]));
      // Only a sent message is stored as the answer; any failure may be retried with the same key.
      return once(c, deps.idempotency, { scope: SCOPE, key: idemKey, bodyHash }, send) as never;
    },
    (result, c) => {
      if (result.success) return;
      throw result.target === "json"
        ? contactValidationError(result.error)
        : validationError(result.error, result.target, c);
    },
  );
}
