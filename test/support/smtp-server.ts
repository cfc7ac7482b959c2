import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { type AddressObject, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A message as it arrived: the SMTP envelope, the parsed headers and the raw header lines. */
export interface ParsedMessage {
  /** Envelope MAIL FROM. */
  mailFrom: string;
  /** Envelope RCPT TO, every recipient the server accepted for this message. */
  rcptTo: string[];
  /** Address in the From header. */
  from: string | undefined;
  fromName: string | undefined;
  /** Addresses in the To header. */
  to: string[];
  /** Address and display name in the Reply-To header. */
  replyTo: string | undefined;
  replyToName: string | undefined;
  subject: string;
  text: string;
  /** Raw header lines, unfolded ("Name: value"), in order. */
  headers: string[];
  raw: string;
}

/**
 * accept: take every message. reject: 550 at RCPT TO. drop: destroy the connection after the
 * client's first command. hang: read DATA but never answer it. lost-reply: take (record) the
 * message but never answer DATA, as a server that delivers a mail whose 250 never reaches the client.
 */
export type SmtpMode = "accept" | "reject" | "drop" | "hang" | "lost-reply";

export interface SmtpTestServer {
  port: number;
  /** `smtp://127.0.0.1:PORT` */
  url: string;
  messages: ParsedMessage[];
  setMode(mode: SmtpMode): void;
  /** From now on, take each message but hold its answer to DATA until `release()`. */
  hold(): void;
  /** Answers every held DATA (250) and stops holding. */
  release(): void;
  /** How many messages wait for their answer (see `hold`). */
  readonly held: number;
  waitForMessage(predicate: (m: ParsedMessage) => boolean, timeoutMs?: number): Promise<ParsedMessage>;
  close(): Promise<void>;
}

const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value);

function headerLines(raw: string): string[] {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end === -1 ? raw : raw.slice(0, end);
  return head
    .replace(/\r?\n[ \t]+/g, " ")
    .split(/\r?\n/)
    .filter(Boolean);
}

/** A real SMTP server on 127.0.0.1 (port 0), no TLS, any or no AUTH, that records what arrives. */
export async function startSmtpServer(): Promise<SmtpTestServer> {
  let mode: SmtpMode = "accept";
  let holding = false;
  let held: Array<() => void> = [];
  const messages: ParsedMessage[] = [];
  const arrivals = new EventEmitter();
  const sockets = new Set<Socket>();

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    logger: false,
    onAuth: (_auth, _session, cb) => cb(null, { user: "test" }),
    onRcptTo: (address, _session, cb) => {
      if (mode !== "reject") return cb();
      const err = Object.assign(new Error(`5.1.1 <${address.address}>: mailbox unavailable`), { responseCode: 550 });
      cb(err);
    },
    onData: (stream, session, cb) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (mode === "hang") return; // never answer DATA
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw)
          .then((parsed) => {
            const from = addresses(parsed.from)[0];
            const replyTo = addresses(parsed.replyTo)[0];
            const message: ParsedMessage = {
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              rcptTo: session.envelope.rcptTo.map((r) => r.address),
              from: from?.address,
              fromName: from?.name,
              to: addresses(parsed.to).map((a) => a.address ?? ""),
              replyTo: replyTo?.address,
              replyToName: replyTo?.name,
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              headers: headerLines(raw),
              raw,
            };
            messages.push(message);
            arrivals.emit("message", message);
            if (holding) held.push(() => cb());
            else if (mode !== "lost-reply") cb();
          })
          .catch((err: Error) => cb(err));
      });
    },
  });
  server.on("error", () => {}); // a dropped client socket is expected, not a test failure
  server.server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    if (mode === "drop") socket.once("data", () => socket.destroy());
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  if (!address || typeof address === "string") throw new Error("SMTP test server did not bind");
  const port = address.port;

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    setMode: (m) => {
      mode = m;
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      const answers = held;
      held = [];
      for (const answer of answers) answer();
    },
    get held() {
      return held.length;
    },
    waitForMessage(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const onMessage = (m: ParsedMessage) => {
          if (!predicate(m)) return;
          clearTimeout(timer);
          arrivals.off("message", onMessage);
          resolve(m);
        };
        const timer = setTimeout(() => {
          arrivals.off("message", onMessage);
          reject(new Error(`no matching message arrived within ${timeoutMs} ms`));
        }, timeoutMs);
        arrivals.on("message", onMessage);
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
