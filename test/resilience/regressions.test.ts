import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAnswer, type FuzzRig, fuzzRig } from "./fuzz.js";

/** Counterexamples the fuzzer found, kept so the bugs they revealed stay fixed. */
let rig: FuzzRig;
beforeAll(async () => {
  rig = await fuzzRig();
});
afterAll(() => rig?.close());

const peer = "198.51.100.7";

describe("fuzzer regressions", () => {
  it("seed 424242: better-auth's own {message, code} error body is answered in the API's error shape", async () => {
    // POST /api/auth/email-otp/send-verification-otp with body "[]" and no Content-Type answered
    // 415 {"message":"Content-Type ... is not allowed"}: not the spec's shape, no error.code.
    const req = {
      method: "POST",
      url: "http://localhost/api/auth/email-otp/send-verification-otp",
      headers: {},
      body: "[]",
      peer,
    };
    expect(await checkAnswer(rig, req)).toBe(400);
    const res = await rig.t.app.request(req.url, { method: "POST", body: "[]" });
    const body = (await res.json()) as { error: { code: string; reason?: string; message: string } };
    expect(body.error.code).toBe("invalid_body");
    expect(body.error.message).toContain("Content-Type");
  });

  it("better-auth's validation error keeps its code as the reason", async () => {
    const res = await rig.t.app.request(
      "/api/auth/email-otp/send-verification-otp",
      {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: "nope", type: "sign-in" }),
      },
      { incoming: { socket: { remoteAddress: peer } } },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; reason?: string; request_id: string } };
    expect(body.error.code).toBe("invalid_body");
    expect(typeof body.error.reason).toBe("string");
    expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  });
});
