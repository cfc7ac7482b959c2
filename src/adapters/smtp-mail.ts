import nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { MailAddress, MailLane, OutgoingMail, SendResult } from "../ports/mail-lane.js";

export interface SmtpMailLaneOptions {
  /** `smtp://user:pass@host:port` or `smtps://…`. */
  url: string;
  /** The fixed sender address. */
  from: string;
  /** Hard deadline for one whole send (connect, greeting, envelope, data). */
  timeoutMs: number;
  logger: Logger;
}

/** CR, LF and the Unicode line breaks some mail software treats as one (NEL, LS, PS). */
const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;

/** Bytes of UTF-8 per encoded-word: 45 are 60 base64 characters, within RFC 2047's 75 per word. */
const WORD_BYTES = 45;

/**
 * Header text as the reader is to show it. Text holding `=?` could hold an RFC 2047
 * encoded-word (`=?utf-8?b?…?=`), which nodemailer passes through as one the caller encoded
 * and every reader decodes: a subject or display name would then show other text than was
 * sent, line breaks and headers included. Such text goes out as UTF-8 B encoded-words of its
 * own, whole code points each, which a reader decodes exactly once, back to the text as written.
 */
function literalHeaderText(text: string): string {
  if (!text.includes("=?")) return text;
  const words: string[] = [];
  let word = "";
  for (const ch of text) {
    if (Buffer.byteLength(word + ch) > WORD_BYTES) {
      words.push(word);
      word = "";
    }
    word += ch;
  }
  words.push(word);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString("base64")}?=`).join(" ");
}

const literalAddress = <A extends string | MailAddress | undefined>(a: A): A =>
  (typeof a === "object" && a.name !== undefined ? { ...a, name: literalHeaderText(a.name) } : a) as A;

interface SmtpFailure {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

const textOf = (a: string | MailAddress | undefined): string[] =>
  a === undefined ? [] : typeof a === "string" ? [a] : [a.address, a.name ?? ""];

/** Why a send failed, short and without credentials (SMTP replies do not echo the password). */
function describe(err: unknown): string {
  const e = (err ?? {}) as SmtpFailure;
  const code = e.code ?? "ERROR";
  const reply = e.responseCode ? ` ${e.responseCode}` : "";
  const text = (e.response ?? e.message ?? "send failed").replace(/\s+/g, " ").trim();
  return `${code}${reply}: ${text}`.slice(0, 500);
}

/**
 * The SMTP mail lane (nodemailer). Every refusal is a value, never a throw: an SMTP 4xx/5xx
 * reply (EENVELOPE, EMESSAGE), a refused or dropped connection (ESOCKET, ECONNECTION), a
 * timeout, or a recipient listed in `info.rejected`.
 */
export function createSmtpMailLane(opts: SmtpMailLaneOptions): MailLane {
  const transport = nodemailer.createTransport({
    url: opts.url,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    dnsTimeout: opts.timeoutMs,
    // Message fields are plain strings: never let one be read as a file path or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const log = opts.logger.child({ component: "mail" });
  const senderDomain = opts.from.slice(opts.from.lastIndexOf("@") + 1) || "localhost";

  async function send(mail: OutgoingMail): Promise<SendResult> {
    const headerText = [...textOf(mail.to), ...textOf(mail.replyTo), mail.subject, mail.uniqueId ?? ""];
    if (headerText.some((t) => LINE_BREAK.test(t))) {
      return { ok: false, reason: "refused: a header field contains a line break" };
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<SendResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, reason: `ETIMEDOUT: no answer within ${opts.timeoutMs} ms` }),
        opts.timeoutMs,
      );
    });
    const attempt = transport
      .sendMail({
        from: opts.from,
        to: mail.to,
        subject: literalHeaderText(mail.subject),
        text: mail.text,
        ...(mail.html !== undefined && { html: mail.html }),
        ...(mail.replyTo !== undefined && { replyTo: literalAddress(mail.replyTo) }),
        ...(mail.uniqueId !== undefined && { messageId: `<${mail.uniqueId}@${senderDomain}>` }),
      })
      .then((info): SendResult => {
        const rejected = (info.rejected ?? []).map(String);
        if (rejected.length > 0) return { ok: false, reason: `recipient rejected: ${rejected.join(", ")}` };
        return { ok: true, messageId: info.messageId };
      })
      .catch((err: unknown): SendResult => ({ ok: false, reason: describe(err) }));
    try {
      const result = await Promise.race([attempt, deadline]);
      if (!result.ok) log.warn({ reason: result.reason }, "mail lane refused a send");
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    send,
    async close() {
      transport.close();
    },
  };
}
