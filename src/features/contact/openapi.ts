import { IDEMPOTENCY_KEY_INVALID } from "../shared/idempotency-answers.js";
import { errorResponse, type HeaderDocs } from "../shared/responses.js";

export const contactLimitHeaders: HeaderDocs = {
  "RateLimit-Policy": {
    description: 'Per-IP hourly limit and global daily cap: `"contact";q=5;w=3600, "contact-daily";q=500;w=86400`.',
    schema: { type: "string" as const, maxLength: 128, example: '"contact";q=5;w=3600, "contact-daily";q=500;w=86400' },
  },
  RateLimit: {
    description: "Messages left for this client IP (`r`) and seconds until its window resets (`t`).",
    schema: { type: "string" as const, maxLength: 128, example: '"contact";r=4;t=3600' },
  },
};

/** Every error the contact desk answers, one example per case. */
export const contactErrorResponses = {
  400: errorResponse(
    "The body is not JSON, or a field is missing, too long, invalid, unknown or holds a line break; or the Idempotency-Key is not 1 to 255 visible ASCII characters.",
    {
      not_json: { code: "invalid_body", message: "Request body must be JSON." },
      line_break: {
        code: "invalid_body",
        message: 'Field "subject" must not contain a line break (CR, LF, U+0085, U+2028 or U+2029).',
        details: {
          formErrors: [],
          fieldErrors: { subject: ["must not contain a line break (CR, LF, U+0085, U+2028 or U+2029)"] },
        },
      },
      email: {
        code: "invalid_body",
        message: 'Field "email" must be a valid e-mail address.',
        details: { formErrors: [], fieldErrors: { email: ["Invalid email address"] } },
      },
      unknown_field: {
        code: "invalid_body",
        message: 'Request body has unknown field "cc"; allowed: name, email, subject, message.',
        details: { formErrors: ['Unrecognized key: "cc"'], fieldErrors: {} },
      },
      idempotency_key: { code: "invalid_body", message: IDEMPOTENCY_KEY_INVALID },
    },
  ),
  429: errorResponse(
    "Too many messages from this client IP this hour, or the desk's daily cap is reached.",
    {
      hourly: {
        code: "rate_limited",
        message: "Contact limit reached: at most 5 messages per hour from one address. Try again later.",
        reason: "CONTACT_HOURLY_LIMIT",
      },
      daily: {
        code: "rate_limited",
        message: "The contact desk has reached its daily message cap. Try again tomorrow.",
        reason: "CONTACT_DAILY_CAP",
      },
    },
    {
      ...contactLimitHeaders,
      "Retry-After": {
        description: "Seconds until the limit resets.",
        schema: { type: "integer" as const, minimum: 1, maximum: 86_400, example: 3412 },
      },
    },
  ),
  // The message counted against the limits before the mail server refused it: its RateLimit says so.
  502: errorResponse(
    "The mail server refused the message (SMTP 4xx/5xx, connection refused or dropped, timeout).",
    {
      refused: {
        code: "upstream_error",
        message: "The mail server refused the message; it has been stored for the operator to resend.",
        details: { id: "con_6f1c2a9e0b7d4c3a8e51" },
      },
    },
    contactLimitHeaders,
  ),
  503: errorResponse("No mail lane is configured on this server (MAIL_URL unset).", {
    no_lane: { code: "unavailable", message: "No mail lane is configured on this server." },
  }),
} as const;
