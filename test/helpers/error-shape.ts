import { expect } from "vitest";
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from "../../src/http/errors.js";

/** The spec's error shape, exactly: `{error:{code,message,request_id,reason?,details?}}`, status by code. */
export function expectErrorShape(status: number, body: string, requestId: string | null | undefined): ErrorCode {
  expect(requestId, "X-Request-Id").toBeTruthy();
  const parsed = JSON.parse(body) as { error: Record<string, unknown> };
  expect(Object.keys(parsed)).toEqual(["error"]);
  const e = parsed.error;
  const extra = Object.keys(e).filter((k) => !["code", "message", "request_id", "reason", "details"].includes(k));
  expect(extra).toEqual([]);
  expect(ERROR_CODES).toContain(e.code);
  expect(typeof e.message).toBe("string");
  expect(e.request_id).toBe(requestId);
  if (e.reason !== undefined) expect(typeof e.reason).toBe("string");
  if (e.details !== undefined) expect(typeof e.details === "object" && e.details !== null).toBe(true);
  expect(status).toBe(ERROR_STATUS[e.code as ErrorCode]);
  return e.code as ErrorCode;
}
