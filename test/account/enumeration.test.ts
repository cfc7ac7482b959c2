import { beforeAll, describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { accountApp, requestCode } from "./support.js";

const VARYING = new Set(["date", "x-request-id"]);
const headersOf = (res: Response) =>
  [...res.headers.entries()].filter(([k]) => !VARYING.has(k)).sort(([a], [b]) => a.localeCompare(b));

describe("sign-in answers do not reveal whether an address has an account", () => {
  const PUBLIC_URL = "http://localhost:8080";
  const acct = accountApp(PUBLIC_URL);

  beforeAll(async () => {
    await acct.signIn("known@example.test");
  });

  it("the account page: same status, headers and body (up to the address itself)", async () => {
    const [a, b] = [acct.agent(), acct.agent()];
    const known = await a.post("/account/sign-in", { email: "known@example.test" });
    const unknown = await b.post("/account/sign-in", { email: "nobody@example.test" });
    expect(known.status).toBe(303);
    expect(unknown.status).toBe(known.status);
    // The pending-sign-in cookie differs only by the address it is signed over.
    const cookieless = (r: Response) => headersOf(r).filter(([k]) => k !== "set-cookie");
    expect(cookieless(unknown)).toEqual(cookieless(known));
    expect(unknown.headers.getSetCookie().map((c) => c.replace(/=[^;]*/, "=V"))).toEqual(
      known.headers.getSetCookie().map((c) => c.replace(/=[^;]*/, "=V")),
    );
    const pk = (await a.follow(known, "/account/sign-in")).res;
    const pu = (await b.follow(unknown, "/account/sign-in")).res;
    expect(pu.status).toBe(pk.status);
    expect(headersOf(pu)).toEqual(headersOf(pk));
    const k = (await pk.text()).replaceAll("known@example.test", "ADDRESS");
    const u = (await pu.text()).replaceAll("nobody@example.test", "ADDRESS");
    expect(u).toBe(k);
  });

  it("the API: byte-identical status, headers and body", async () => {
    const send = (email: string) =>
      acct.t.app.request("/api/auth/email-otp/send-verification-otp", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
        body: JSON.stringify({ email, type: "sign-in" }),
      });
    const known = await send("known@example.test");
    const unknown = await send("stranger@example.test");
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(known.status);
    expect(headersOf(unknown)).toEqual(headersOf(known));
    expect(await unknown.text()).toBe(await known.text());
  });
});

describe("sessions are cookies, never API keys", () => {
  const PUBLIC_URL = "https://almanac.example";
  const acct = accountApp(PUBLIC_URL);

  it("on https the session cookie is __Host- prefixed, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain", async () => {
    const again = acct.agent();
    const code = await requestCode(again, acct.smtp, "secure@example.test");
    const verified = await again.post("/account/verify", { email: "secure@example.test", code });
    const line = verified.headers.getSetCookie().find((c) => c.startsWith("__Host-almanac.session_token="));
    expect(line).toBeDefined();
    expect(line).toMatch(/; Secure/i);
    expect(line).toMatch(/; HttpOnly/i);
    expect(line).toMatch(/; SameSite=Lax/i);
    expect(line).toMatch(/; Path=\/(;|$)/i);
    expect(line).not.toMatch(/; Domain=/i);
    expect(again.cookie("__Host-almanac.session_token")).toBeDefined();
    expect((await again.get("/account")).status).toBe(200);
  });

  it("a session cookie is not accepted by /v1/vibe/classify", async () => {
    const agent = await acct.signIn("classify@example.test");
    const cookie = `__Host-almanac.session_token=${agent.cookie("__Host-almanac.session_token")}`;
    const res = await acct.t.app.request("/v1/vibe/classify", {
      method: "POST",
      headers: { "Content-Type": "application/json", Cookie: cookie },
      body: JSON.stringify({ texts: ["hello"] }),
    });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).error.code).toBe("unauthorized");
  });
});
