import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { documented } from "../../http/contract.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";
import { openapiRoute, validationError } from "../../http/validation.js";
import { sha256Hex } from "../../lib/hash.js";
import { claimOrWait, holding, idempotencyTiming } from "../shared/idempotency.js";
import {
  answerPrior,
  IDEMPOTENCY_CONTRACT,
  IDEMPOTENCY_KEY_INVALID,
  idempotencyRefusalError,
} from "../shared/idempotency-answers.js";
import { contactErrorResponses, contactLimitHeaders } from "./openapi.js";
import { ContactRequest, ContactSent, IdempotencyHeader } from "./schema.js";
import { type ContactDeps, sendContact, sendContactOnce } from "./send.js";
import { ContactStore } from "./store.js";
import { contactValidationError } from "./validation.js";

/**
 * An Idempotency-Key is its client's, as the classify route's is its API key's: the desk has no
 * key, so a client is what its hourly limit counts by (the address through TRUST_PROXY, an IPv6
 * client by its CLIENT_IPV6_PREFIX network). Two clients sending the same key never meet. Hashed,
 * as classify's: an address is whatever the trusted proxy's header says, of any length, and
 * PostgreSQL refuses a (scope, key) of more than about 2,700 bytes in its primary key.
 */
const scopeOf = (clientKey: string) => `contact:${sha256Hex(clientKey)}`;

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
    "(`CONTACT_DAILY_CAP`). Send `Idempotency-Key` to retry safely; a key is its client's own (the " +
    "address, or IPv6 network, the hourly limit counts by), so two clients sending the same key never meet.",
  request: {
    headers: IdempotencyHeader,
    body: { required: true, content: { "application/json": { schema: ContactRequest } } },
  },
  responses: {
    200: {
      description: "The message was stored and accepted by the mail server.",
      headers: contactLimitHeaders,
      content: { "application/json": { schema: ContactSent } },
    },
    ...contactErrorResponses,
  },
});

/** POST /v1/mail/contact: the contact desk. */
export function registerContact(app: OpenAPIHono<AppEnv>, deps: ContactDeps): void {
  const store = new ContactStore(deps.database.db, deps.now);
  openapiRoute(
    app,
    route,
    documented(async (c) => {
      const body = c.req.valid("json");
      const idemKey = c.req.valid("header")["idempotency-key"];
      const lane = deps.mail;
      if (!lane) throw new ApiError("unavailable", "No mail lane is configured on this server.");

      const send = {
        deps,
        store,
        lane,
        input: { ...body, clientIp: c.get("clientIp"), clientKey: c.get("clientKey"), idempotencyKey: idemKey },
      };
      if (!idemKey) {
        const answer = await sendContact(send);
        return c.json(answer.body, 200, answer.headers);
      }
      const spec = {
        scope: scopeOf(send.input.clientKey),
        key: idemKey,
        bodyHash: sha256Hex(JSON.stringify([body.name, body.email, body.subject ?? null, body.message])),
      };
      const timing = idempotencyTiming(deps.config, deps.now);
      const claim = await claimOrWait(deps.idempotency, spec, timing, c.req.raw.signal);
      if (claim.kind !== "owned") return answerPrior(c, claim) as never;
      // A mail cannot be unsent: the job runs to its end even when the client goes away.
      const held = { scope: spec.scope, key: spec.key, owner: claim.owner, leaseMs: timing.leaseMs };
      const answer = await holding(deps.idempotency, spec, claim.owner, timing, () =>
        sendContactOnce(send, idemKey, held),
      );
      if (!answer.ok) throw idempotencyRefusalError(answer.error);
      return c.json(answer.value.body, 200, answer.value.headers);
    }, IDEMPOTENCY_CONTRACT),
    (result, c): undefined => {
      if (result.success) return undefined;
      // The only header read is Idempotency-Key: refused in the same words as classify refuses it.
      if (result.target === "header") throw new ApiError("invalid_body", IDEMPOTENCY_KEY_INVALID);
      throw result.target === "json"
        ? contactValidationError(result.error)
        : validationError(result.error, result.target, c);
    },
  );
}
