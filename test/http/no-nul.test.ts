import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, type TestServer, testServer } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bodyOf, rawRequest } from "../helpers/raw-http.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

const PUBLIC_URL = "http://localhost:8080";
const NUL_REFUSED = { code: "invalid_body", message: "Request body must not contain the NUL character (U+0000)." };
const CONTACT = { name: "Ada", email: "ada@example.com", subject: "Hello", message: "hi" };

// U+0000 in any JSON body: one 400 at the edge, the same on SQLite and PostgreSQL (whose text
// cannot hold it, so it answered 500 there).
describe.each([
  ["SQLite", false],
  [`PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, true],
])("a NUL character in a JSON body, on %s", (_store, postgres) => {
  let t: TestServer;
  let smtp: SmtpTestServer;
  let drop = async () => {};
  let key = "";

  beforeAll(async () => {
    if (postgres && !DATABASE_URL) return;
    smtp = await startSmtpServer();
    const pg = postgres ? await freshPostgresUrl() : undefined;
    if (pg) drop = pg.drop;
    t = await testServer({ DATABASE_URL: pg?.url, MAIL_URL: smtp.url, PUBLIC_URL, CONTACT_HOURLY_LIMIT: "1000" });
    key = (await t.deps.keys.create({ name: "nul", permissions: [t.config.KEY_PERMISSION], remaining: 10 })).key;
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await drop();
  });

  const post = (path: string, json: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: PUBLIC_URL, ...headers },
      body: json,
    });
  const withNul = (body: Record<string, unknown>, field: string) =>
    JSON.stringify({ ...body, [field]: `${String(body[field] ?? "a")}\u0000b` });

  it.skipIf(postgres && !DATABASE_URL)(
    "contact, sign-in and classify answer 400 invalid_body; nothing is stored",
    async () => {
      const answers = [
        await post("/v1/mail/contact", withNul(CONTACT, "message")),
        await post("/v1/mail/contact", withNul(CONTACT, "name")),
        await post("/api/auth/sign-in/email-otp", JSON.stringify({ email: "a\u0000b@example.com", otp: "123456" })),
        await post("/api/auth/email-otp/send-verification-otp", JSON.stringify({ email: "a\u0000b", type: "sign-in" })),
        await post("/v1/vibe/classify", JSON.stringify({ texts: ["fine", "bad\u0000"] }), {
          Authorization: `Bearer ${key}`,
        }),
        // In a key, too, and after escaped backslashes (the escape still means U+0000).
        await post(
          "/v1/mail/contact",
          `{"name":"Ada","email":"ada@example.com","subject":"s","message":"\\\\\\u0000"}`,
        ),
      ];
      for (const res of answers) {
        expect(res.status).toBe(400);
        expect((await errorOf(res)).error).toMatchObject(NUL_REFUSED);
      }
      expect(await t.deps.database.db.selectFrom("contact_messages").select("id").execute()).toEqual([]);
      // Not charged: the key has all its uses.
      const usage = await fetch(`${t.url}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } });
      expect(((await usage.json()) as { remaining_uses: number }).remaining_uses).toBe(10);
    },
  );

  it.skipIf(postgres && !DATABASE_URL)("classify read off the socket (chunked) refuses it the same way", async () => {
    const json = JSON.stringify({ texts: ["x\u0000"] });
    const res = await rawRequest(t.server.port, [
      `POST /v1/vibe/classify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
    ]);
    expect(res.status).toBe(400);
    expect(JSON.parse(bodyOf(res.text)).error).toMatchObject(NUL_REFUSED);
  });

  it.skipIf(postgres && !DATABASE_URL)("a backslash followed by the text u0000 is not a NUL: accepted", async () => {
    const res = await post("/v1/mail/contact", JSON.stringify({ ...CONTACT, message: "C:\\u0000\\dir" }));
    expect(res.status).toBe(200);
    const rows = await t.deps.database.db.selectFrom("contact_messages").select("message").execute();
    expect(rows.map((r) => r.message)).toContain("C:\\u0000\\dir");
  });
});
