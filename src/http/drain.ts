import type { RequestListener, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * What the server does between SIGTERM and exit (docs/scaling.md "Rolling restarts"). Once
 * begun: `/readyz` answers 503; every response says `Connection: close`, including the ones in
 * progress whose headers are not out yet, so each keep-alive socket closes right after the
 * answer it carries; the listener stops accepting (server.ts). A socket idle at that moment is
 * not cut: its client may be writing a request on it this very instant, and a request lost that
 * way is not one a balancer may retry if it is a POST. It closes when its client closes it,
 * after one more answer (with `Connection: close`), or when its keep-alive time runs out, which
 * the client was told and closes before (server.ts's `Keep-Alive`). The process exits when the
 * last socket is gone.
 */
export class Drain {
  #active = false;
  readonly #sockets = new Set<Socket>();

  /** Whether the drain has begun (the process is shutting down). */
  get active(): boolean {
    return this.#active;
  }

  /** Sockets open now. */
  get sockets(): number {
    return this.#sockets.size;
  }

  /** Follows `server`'s connections, so `begin` can reach the answers in progress. */
  track(server: Server): void {
    server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  begin(): void {
    this.#active = true;
    for (const socket of this.#sockets) {
      const res = (socket as { _httpMessage?: ServerResponse })._httpMessage;
      if (res && !res.headersSent) res.shouldKeepAlive = false;
    }
  }

  /** Wraps the request listener: while draining, the answer closes its connection. */
  wrap(next: RequestListener): RequestListener {
    return (req, res) => {
      if (this.#active) res.shouldKeepAlive = false;
      next(req, res);
    };
  }
}
