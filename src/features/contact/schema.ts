import { z } from "@hono/zod-openapi";
import { idempotencyKeyHeader } from "../shared/idempotency-answers.js";

/**
 * CR, LF and the Unicode line breaks (NEL U+0085, LS U+2028, PS U+2029): a field that reaches
 * a mail header must hold none of them, or it could add a header or a recipient.
 */
export const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;
/** Other control characters (C0, DEL, C1, tab included) have no place in a header field either. */
const CONTROL = /\p{Cc}/u;

export const LINE_BREAK_MESSAGE = "must not contain a line break (CR, LF, U+0085, U+2028 or U+2029)";
const CONTROL_MESSAGE = "must not contain control characters";
/** A lone UTF-16 surrogate: stored or mailed it becomes U+FFFD, so the message kept is not the one sent. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const SURROGATE_MESSAGE = "must not contain an unpaired surrogate (U+D800 to U+DFFF)";
const wellFormed = (s: string) => !UNPAIRED_SURROGATE.test(s);
const BLANK_MESSAGE = "must not be blank";

const notBlank = (s: string) => s.trim().length > 0;
/** The same rules as a pattern for the document: a non-space character, no line breaks or controls. */
const NO_BREAKS_NOT_BLANK =
  "^[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]*$";

/** A header-bound text field: bounded, single-line, no control characters. */
const headerText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !LINE_BREAK.test(s), { error: LINE_BREAK_MESSAGE })
    .refine((s) => !CONTROL.test(s), { error: CONTROL_MESSAGE })
    .refine(wellFormed, { error: SURROGATE_MESSAGE });

export const ContactRequest = z
  .strictObject({
    name: headerText(100).refine(notBlank, { error: BLANK_MESSAGE }).openapi({
      description: "Sender's name (1–100 characters, one line, not blank).",
      minLength: 1,
      pattern: NO_BREAKS_NOT_BLANK,
      example: "Ada Lovelace",
    }),
    email: headerText(254).pipe(z.email()).openapi({
      description: "Sender's address (at most 254 characters). Used only as the Reply-To of the mail.",
      // One rule, the server's (Zod's e-mail pattern); no `format: email`, whose validators differ
      // from it (ajv-formats refuses `a@b-.com`, which this pattern and the server take).
      pattern: z.regexes.email.source,
      example: "ada@example.com",
    }),
    subject: headerText(200).refine(notBlank, { error: BLANK_MESSAGE }).optional().openapi({
      description: "Optional subject (1–200 characters, one line, not blank).",
      minLength: 1,
      pattern: NO_BREAKS_NOT_BLANK,
      example: "Question about VAT rates",
    }),
    message: z
      .string()
      .min(1)
      .max(10_000)
      .refine(notBlank, { error: BLANK_MESSAGE })
      .refine(wellFormed, { error: SURROGATE_MESSAGE })
      .openapi({ description: "The message (1–10,000 characters; line breaks allowed).", example: "Hello! …" }),
  })
  .openapi("ContactRequest", {
    example: {
      name: "Ada Lovelace",
      email: "ada@example.com",
      subject: "Question about VAT rates",
      message: "Hello,\nis the reduced rate for books in Ireland included?\nThanks, Ada",
    },
  });

export type ContactRequest = z.infer<typeof ContactRequest>;

export const ContactSent = z
  .object({
    id: z.string().openapi({ description: "Id of the stored message.", example: "con_6f1c2a9e0b7d4c3a8e51" }),
    status: z.literal("sent"),
  })
  .openapi("ContactSent", { example: { id: "con_6f1c2a9e0b7d4c3a8e51", status: "sent" } });

export const IdempotencyHeader = z.object({
  "idempotency-key": idempotencyKeyHeader(
    "Makes a retried request safe: the same key and body from the same client (address, or IPv6 network, as the hourly limit counts it) within 24 h send one mail and replay the answer; another client's key of the same value is another key.",
    "3f0c1b52-8d7e-4b7f-9a51-6a2f1d0c9e11",
  ),
});
