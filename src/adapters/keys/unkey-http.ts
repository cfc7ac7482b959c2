import { BodyTooLarge, readCapped, refusedRedirect } from "../upstream-http.js";

/** Talking to Unkey's v2 API: one deadline per call, one retry only when no connection was made. */

export interface UnkeyHttpOptions {
  baseUrl: string;
  rootKey: string;
  /** Hard deadline for one call, retry included (UNKEY_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest answer body read (UPSTREAM_MAX_BYTES). */
  maxBytes: number;
}

export type UnkeyResponse =
  | { ok: true; status: number; body: unknown }
  /**
   * No usable HTTP answer: unreachable, timed out, or not JSON. `sent`: the request may have
   * reached Unkey and been acted on (its answer lost: a timeout, a reset, a garbled body); false
   * when it provably did not (no connection, or a redirect instead of an answer).
   */
  | { ok: false; detail: string; sent: boolean };

/** Errors that prove the request never reached Unkey, so a retry cannot spend a use twice. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

export async function callUnkey(opts: UnkeyHttpOptions, path: string, payload: unknown): Promise<UnkeyResponse> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const url = `${opts.baseUrl.replace(/\/+$/, "")}${path}`;
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${opts.rootKey}`, "Content-Type": "application/json" },
        body: JSON.stringify(payload),
        signal,
        // A redirect is a failure, never followed: the customer's key and the root key go nowhere else.
        redirect: "manual",
      });
      if (await refusedRedirect(res))
        return { ok: false, detail: `Unkey ${path} redirected with ${res.status}`, sent: false };
      let text: string;
      try {
        text = await readCapped(res, opts.maxBytes);
      } catch (err) {
        if (err instanceof BodyTooLarge)
          return { ok: false, detail: `Unkey ${path} answered a body over ${err.maxBytes} bytes`, sent: true };
        throw err;
      }
      try {
        return { ok: true, status: res.status, body: JSON.parse(text) };
      } catch {
        return { ok: false, detail: `Unkey ${path} answered ${res.status} with a body that is not JSON`, sent: true };
      }
    } catch (err) {
      const code = causeCode(err);
      if (attempt === 0 && code !== undefined && NOT_CONNECTED.has(code) && !signal.aborted) continue;
      const why = signal.aborted ? `no answer within ${opts.timeoutMs} ms` : (code ?? (err as Error).message);
      const sent = code === undefined || !NOT_CONNECTED.has(code);
      return { ok: false, detail: `Unkey ${path} unreachable: ${why}`, sent };
    }
  }
}

/** Unkey's error body `{meta, error: {title, detail, status}}`, for messages. */
export function unkeyErrorDetail(body: unknown): string {
  const error = (body as { error?: { title?: unknown; detail?: unknown } } | null)?.error;
  const parts = [error?.title, error?.detail].filter((p): p is string => typeof p === "string");
  return parts.length ? parts.join(": ") : "unknown error";
}
