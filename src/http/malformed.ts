import { randomUUID } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { RequestError } from "@hono/node-server";
import type { Logger } from "pino";
import { CORS_HEADERS } from "./cors.js";
import { DRAINING_MESSAGE } from "./drain.js";
import { ApiError, type ErrorCode, errorBody } from "./errors.js";

/**
 * Requests the app can never be given, answered at the node:http edge in the one error shape with
 * an `X-Request-Id` (never Node's or @hono/node-server's bare 400), and the connection closed:
 * what the parser refuses (`clientError`), a CONNECT, and a request without a usable Host or
 * target. Docs: docs/api.md "Every response".
 */

// RFC 3986 authority without userinfo: reg-name or IP literal, optional port.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[\w\-.~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::\d{0,5})?$/;
const ABSOLUTE = /^https?:\/\//i;

/** Why this request cannot be routed, or undefined when it can. */
function malformation(req: IncomingMessage): string | undefined {
  const target = req.url ?? "";
  if (target[0] !== "/" && !ABSOLUTE.test(target)) return "the target must be a path";
  const host = req.headers.host;
  if (host === undefined) return "the Host header is missing";
  if (!HOST.test(host)) return "the Host header is not a host name";
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === "host") hosts += 1;
  }
  if (hosts > 1) return "the Host header is repeated";
  return undefined;
}

/** The one shape, as a serialised body with its id. */
function shaped(code: ErrorCode, message: string) {
  const error = new ApiError(code, message);
  const id = randomUUID();
  return { error, id, body: JSON.stringify(errorBody(error, id)) };
}

/**
 * What the document's `default` answer declares on every error, beside X-Request-Id: never
 * cached, and readable from a web page (the CORS headers of every /v1 answer).
 */
const ERROR_HEADERS: Record<string, string> = { "Cache-Control": "no-store", ...Object.fromEntries(CORS_HEADERS) };
const RAW_HEADERS = Object.entries(ERROR_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join("");

/** Refuses what `malformation` names with 400 `invalid_body`; passes the rest to `next`. */
export function refuseMalformed(next: RequestListener, logger: Logger): RequestListener {
  return (req, res) => {
    const problem = malformation(req);
    if (problem === undefined) return next(req, res);
    const cors = req.url?.startsWith("/v1/") ? Object.fromEntries(CORS_HEADERS) : {};
    answer(res, shaped("invalid_body", `Malformed HTTP request: ${problem}.`), logger, problem, cors);
  };
}

/**
 * What a draining instance answers a request it will not take (http/drain.ts `refuses`): 503
 * `unavailable` before any work, so a balancer sends it to another instance.
 */
export function refuseDraining(logger: Logger): RequestListener {
  return (req, res) => {
    const refusal = shaped("unavailable", DRAINING_MESSAGE);
    // A web page calling the API reads the refusal (and its Retry-After) as it reads any /v1 answer.
    const cors = req.url?.startsWith("/v1/") ? Object.fromEntries(CORS_HEADERS) : {};
    answer(res, refusal, logger, "draining", { "Retry-After": "1", ...cors }, "refused while draining");
  };
}

function answer(
  res: ServerResponse,
  { error, id, body }: ReturnType<typeof shaped>,
  logger: Logger,
  why: string,
  headers: Record<string, string> = {},
  msg = "malformed request",
) {
  logger.info({ request_id: id, status: error.status, why }, msg);
  res.shouldKeepAlive = false;
  res.writeHead(error.status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
    "X-Request-Id": id,
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(body);
}

/**
 * @hono/node-server's `errorHandler`: what it cannot turn into a web Request (a URL the WHATWG
 * parser refuses, a backslash in the path) gets the same 400; anything else is a 500 `internal`.
 */
export function requestErrorResponse(logger: Logger) {
  return (err: unknown): Response => {
    const [code, message]: [ErrorCode, string] =
      err instanceof RequestError
        ? ["invalid_body", `Malformed HTTP request: ${err.message}.`]
        : ["internal", "Internal error."];
    const { error, id, body } = shaped(code, message);
    if (code === "internal") logger.error({ err, request_id: id }, "request listener failed");
    else logger.info({ request_id: id, status: error.status, why: message }, "malformed request");
    return new Response(body, {
      status: error.status,
      headers: { "Content-Type": "application/json", "X-Request-Id": id, ...ERROR_HEADERS, Connection: "close" },
    });
  };
}

/** Writes a whole error response straight onto a socket the HTTP layer has given up on, then closes it. */
function writeRaw(socket: Duplex, code: ErrorCode, message: string, logger: Logger, why: string | undefined) {
  const { error, id, body } = shaped(code, message);
  logger.info({ request_id: id, status: error.status, why }, "client error");
  socket.on("error", () => undefined); // a reset while closing is of no interest now
  socket.end(
    `HTTP/1.1 ${error.status} ${code.replaceAll("_", " ")}\r\n` +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\n` +
      RAW_HEADERS +
      "Connection: close\r\n\r\n" +
      body,
  );
  // Half-closed: the client reads the answer, then closes. One that never does is cut a
  // second later (a reset right away could discard the answer before the client read it).
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * node:http `clientError`: the parser refused the bytes (malformed request line or chunk size,
 * headers too large) or the request was not received in time (headers or body). Answered in the
 * one shape unless part of a response is already on the wire.
 */
export function writeClientError(err: NodeJS.ErrnoException, socket: Duplex, logger: Logger): void {
  const inFlight = (socket as { _httpMessage?: ServerResponse })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [code, message]: [ErrorCode, string] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ["request_timeout", "Request was not received in time."]
      : err.code === "HPE_HEADER_OVERFLOW"
        ? ["headers_too_large", "Request headers are too large."]
        : ["invalid_body", "Malformed HTTP request."];
  writeRaw(socket, code, message, logger, err.code);
}

/** node:http `connect`: this is not a proxy. */
export function refuseConnect(_req: IncomingMessage, socket: Duplex, logger: Logger): void {
  writeRaw(socket, "invalid_body", "Malformed HTTP request: CONNECT is not served here.", logger, "CONNECT");
}
