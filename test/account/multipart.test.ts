import { describe, expect, it } from "vitest";
import { errorOf } from "../helpers/app.js";
import { accountApp } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

describe("malformed form bodies on /account/* are 400, never 500", () => {
  const acct = accountApp(PUBLIC_URL);

  it.each([
    ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.c'],
    ["multipart/form-data; boundary=x", "garbage without boundaries"],
    ["multipart/form-data", "--x\r\n\r\n--x--"],
    ["multipart/form-data; boundary=", "--\r\n"],
    ["multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--x--\r\n"],
    ["application/x-www-form-urlencoded", "%E0%A4%A=1&email=%"],
  ])("%s with %j → 400 invalid_body", async (type, body) => {
    for (const path of ["/account/sign-in", "/account/verify", "/account/sign-out"]) {
      const res = await acct.t.app.request(path, {
        method: "POST",
        headers: { "Content-Type": type, Origin: PUBLIC_URL, "Sec-Fetch-Site": "same-origin" },
        body,
      });
      // sign-out first checks the session (none here: 401); the others parse the body first.
      if (path === "/account/sign-out") {
        expect(res.status).toBe(401);
        continue;
      }
      expect(res.status, `${path} ${type}`).toBe(400);
      if (res.headers.get("content-type")?.includes("json")) {
        expect((await errorOf(res)).error).toMatchObject({
          code: "invalid_body",
          message:
            "Request body must be a well-formed form (application/x-www-form-urlencoded or multipart/form-data).",
        });
      }
    }
  });
});
