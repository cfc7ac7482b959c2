import { randomUUID } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Logger } from "pino";
import type { App } from "./app.js";
import type { Config } from "./config.js";
import { ApiError, type ErrorCode, errorBody } from "./http/errors.js";

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown timeout), then resolves. */
  close(): Promise<void>;
}

type ServerTimeouts = Pick<
  Config,
  "HEADERS_TIMEOUT_MS" | "REQUEST_TIMEOUT_MS" | "KEEP_ALIVE_TIMEOUT_MS" | "SHUTDOWN_TIMEOUT_MS"
>;

/** Listens with explicit timeouts, so slow or stuck clients are cut in seconds. */
export async function startServer(
  app: App,
  opts: ServerTimeouts & { port: number; host: string },
  logger: Logger,
  /** The hot lane (hotLaneFor(deps)): answers what it can in front of the app. */
  lane?: (app: RequestListener) => RequestListener,
): Promise<RunningServer> {
  const listener = getRequestListener(app.fetch);
  const server = createServer(lane ? lane(listener) : listener);
  server.headersTimeout = opts.HEADERS_TIMEOUT_MS;
  server.requestTimeout = opts.REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = opts.KEEP_ALIVE_TIMEOUT_MS;
  // How often Node checks headersTimeout/requestTimeout (default 30 s): a slow client is
  // cut within about a second of its deadline.
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = 1000;
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => writeClientError(err, socket, logger));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), opts.SHUTDOWN_TIMEOUT_MS);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      // Idle keep-alive sockets would hold close() open; busy ones close after their response.
      server.closeIdleConnections();
    });
    return closing;
  };
  return { server, port, close };
}

/**
 * Errors Node's HTTP parser raises before the app sees a request (malformed request line,
 * headers too large, request timeout) still get the one error shape and an X-Request-Id.
 */
function writeClientError(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex, logger: Logger) {
  if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [code, message]: [ErrorCode, string] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? ["request_timeout", "Request was not received in time."]
      : err.code === "HPE_HEADER_OVERFLOW"
        ? ["headers_too_large", "Request headers are too large."]
        : ["invalid_body", "Malformed HTTP request."];
  const apiError = new ApiError(code, message);
  const id = randomUUID();
  const body = JSON.stringify(errorBody(apiError, id));
  logger.info({ request_id: id, status: apiError.status, err: err.code }, "client error");
  socket.end(
    `HTTP/1.1 ${apiError.status} ${code.replaceAll("_", " ")}\r\n` +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}
