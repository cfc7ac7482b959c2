#!/usr/bin/env node
// A mail lane for trying Almanac on one machine: an SMTP server on 127.0.0.1 (no TLS, any or no
// login) that prints every message it receives — sign-in codes, contact messages, key expiry
// reminders — to stdout. For local use only; it keeps nothing. It needs the devDependencies
// (`npm ci`):
//
//   node scripts/dev-mail.mjs [PORT]                        # default 2525
//   MAIL_URL=smtp://127.0.0.1:2525 npm start                # in another terminal
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

const port = Number(process.argv[2] ?? 2525);

const server = new SMTPServer({
  secure: false,
  disabledCommands: ["STARTTLS"],
  authOptional: true,
  allowInsecureAuth: true,
  disableReverseLookup: true,
  logger: false,
  onAuth: (_auth, _session, cb) => cb(null, { user: "dev" }),
  onData(stream, session, cb) {
    simpleParser(stream)
      .then((mail) => {
        const to = session.envelope.rcptTo.map((r) => r.address).join(", ");
        const replyTo = mail.replyTo ? `\nReply-To: ${mail.replyTo.text}` : "";
        process.stdout.write(`--- mail to ${to}\nSubject: ${mail.subject ?? ""}${replyTo}\n\n${mail.text ?? ""}\n`);
        cb();
      })
      .catch(cb);
  },
});
server.on("error", (err) => console.error(`dev-mail: ${err.message}`));
server.listen(port, "127.0.0.1", () => {
  const address = server.server.address();
  console.log(`dev-mail: MAIL_URL=smtp://127.0.0.1:${typeof address === "object" ? address?.port : port}`);
});
