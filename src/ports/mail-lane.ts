/** A mailbox: nodemailer encodes `name` itself (never concatenate "Name <addr>" by hand). */
export interface MailAddress {
  name?: string;
  address: string;
}

/**
 * An outgoing mail. Addresses and header fields must already be validated (no CR/LF); the
 * lane refuses a mail whose header fields still contain a line break. From is fixed by the lane.
 */
export interface OutgoingMail {
  to: string | MailAddress;
  subject: string;
  text: string;
  html?: string;
  replyTo?: string | MailAddress;
  /**
   * A stable id for this mail: the Message-ID is then `<uniqueId@sender's domain>`, the same on
   * every resend, so a copy sent again after a lost reply can be recognised as the same mail.
   */
  uniqueId?: string;
}

export type SendResult =
  | { ok: true; messageId: string }
  /** The lane refused: SMTP 4xx/5xx, refused connection, timeout, or a rejected recipient. */
  | { ok: false; reason: string };

/** The mail lane (SMTP). Absent when MAIL_URL is unset: callers answer 503 `unavailable`. */
export interface MailLane {
  send(mail: OutgoingMail): Promise<SendResult>;
  close(): Promise<void>;
}
