import { createServer, type RequestListener, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, Server as NetServer } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { App } from "./app.js";
import type { AppDeps } from "./deps.js";
import { DRAIN_QUIET_MS } from "./http/drain.js";
import { hotLaneFor } from "./http/hot-lane.js";
import {
  refuseConnect,
  refuseDraining,
  refuseMalformed,
  requestErrorResponse,
  writeClientError,
} from "./http/malformed.js";

export interface RunningServer {
  server: Server;
  port: number;
  /**
   * Drains (http/drain.ts) and resolves once the last connection is closed, or at the shutdown
   * deadline, when whatever is still open is cut. `quietMs` (default DRAIN_QUIET_MS): how long
   * the listener must go without a new connection before it closes (0: at once, for tests).
   */
  close(options?: { quietMs?: number }): Promise<void>;
}

/**
 * How much sooner than KEEP_ALIVE_TIMEOUT_MS the `Keep-Alive: timeout=N` header says an idle socket
 * closes. Node closes it at KEEP_ALIVE_TIMEOUT_MS (Node 20.20 one second later still) but would
 * advertise all of it; a client's idle timer can fire a second or more late (undici's are that
 * coarse, a busy event loop later still), and then reuses a socket the server is closing. With
 * this margin a client (or balancer) that keeps to the header stops reusing the socket first.
 */
export const KEEP_ALIVE_MARGIN_MS = 1000;

/** How long, once the connections are gone, the handlers of cut requests get to undo their work. */
const SETTLE_MAX_MS = 3000;

/** The `timeout=N` (seconds) the server's `Keep-Alive` header gives for KEEP_ALIVE_TIMEOUT_MS. */
export const advertisedKeepAliveSec = (keepAliveMs: number): number =>
  Math.floor(Math.max(0, keepAliveMs - KEEP_ALIVE_MARGIN_MS) / 1000);

/** Listens with explicit timeouts, so slow or stuck clients are cut in seconds. */
export async function startServer(app: App, deps: AppDeps, at: { port: number; host: string }): Promise<RunningServer> {
  const { config, logger, drain } = deps;
  const lane = hotLaneFor(deps);
  const listener = getRequestListener(app.fetch, { errorHandler: requestErrorResponse(logger) });
  // Node's own bare 400 for a missing Host is replaced by refuseMalformed's.
  const server = createServer(
    { requireHostHeader: false },
    advertiseKeepAlive(
      drain.wrap(refuseMalformed(lane ? lane(listener) : listener, logger), refuseDraining(logger)),
      config.KEEP_ALIVE_TIMEOUT_MS,
    ),
  );
  server.headersTimeout = config.HEADERS_TIMEOUT_MS;
  server.requestTimeout = config.REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = config.KEEP_ALIVE_TIMEOUT_MS;
  // How often Node checks headersTimeout/requestTimeout (default 30 s): a slow client is
  // cut within about a second of its deadline.
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = 1000;
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => writeClientError(err, socket, logger));
  server.on("connect", (req, socket) => refuseConnect(req, socket, logger));
  drain.track(server);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  const close = ({ quietMs = DRAIN_QUIET_MS }: { quietMs?: number } = {}) => {
    closing ??= (async () => {
      const began = performance.now();
      drain.begin();
      const force = setTimeout(() => {
        logger.warn({ connections: drain.sockets }, "shutdown deadline: cutting the connections still open");
        server.closeAllConnections();
      }, config.SHUTDOWN_TIMEOUT_MS);
      force.unref();
      // Not at once: closing the listener resets the connections the kernel has queued but not yet
      // handed over, and a POST the balancer sent on one is lost (measured: 5 of 6,450 calls at
      // 200/s). It stays open until the balancer stops connecting (http/drain.ts), at the latest
      // half the shutdown deadline, so the answers that follow have the other half.
      const stillArriving = await new Promise<boolean>((resolve) =>
        drain.whenQuiet(quietMs, config.SHUTDOWN_TIMEOUT_MS / 2, resolve),
      );
      const listening_ms = Math.round(performance.now() - began);
      const arrivals = drain.arrivals;
      if (stillArriving)
        logger.warn({ listening_ms, arrivals }, "drain: closing the listener while connections still arrive");
      // net.Server's close: stop accepting and call back once the last connection is gone.
      // http.Server's close would also cut every idle keep-alive socket at once (http/drain.ts).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      logger.info({ listening_ms, arrivals, connections: drain.sockets }, "drain: listener closed");
      await closed;
      clearTimeout(force);
      // A request cut at the deadline: its handler gives back its use and frees its key first.
      if (!(await drain.settled(SETTLE_MAX_MS)))
        logger.warn({ handlers: drain.writing }, "shutdown: handlers of cut requests still running");
      logger.info({ drain_ms: Math.round(performance.now() - began) }, "drained");
      server.close(); // nothing left to close: this stops Node's timeout checks
    })();
    return closing;
  };
  return { server, port, close };
}

/** Makes every keep-alive answer's `Keep-Alive: timeout=N` the advertised time, not the real one. */
function advertiseKeepAlive(next: RequestListener, keepAliveMs: number): RequestListener {
  // Node writes `timeout=floor(_keepAliveTimeout / 1000)`, copied from server.keepAliveTimeout.
  const advertisedMs = advertisedKeepAliveSec(keepAliveMs) * 1000 || 1;
  return (req, res) => {
    (res as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = advertisedMs;
    next(req, res);
  };
}
