import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { type Contract, errorAnswer, NO_STORE_HEADER, retryAfterHeader, X_REQUEST_ID } from "./contract.js";
import { CORS_DOCS } from "./cors.js";

/**
 * How long the listener must go without a new connection, after SIGTERM, before it closes. Closing
 * a listener resets every connection the kernel has completed but the process has not accepted yet,
 * and a balancer has already sent its request on each: a POST lost that way is one it must not
 * retry. So the listener stays open, and closes only once the balancer has stopped connecting
 * (nginx stops after `max_fails` answers it retried elsewhere: the 503s `refuses` gives).
 */
export const DRAIN_QUIET_MS = 500;

/** Methods a draining instance refuses (503 before any work): every balancer may retry them. */
const RETRYABLE = new Set(["GET", "HEAD", "OPTIONS"]);
/** Answered even while draining: liveness, and readiness, which says it is draining. */
const ALWAYS = new Set(["/healthz", "/readyz"]);

export const DRAINING_MESSAGE = "This instance is shutting down; retry, another one will answer.";

/**
 * The refusal of `refuses` in the document (server.ts wraps the listener in the drain, outside
 * the app: the answer carries only its own headers, malformed.ts's refuseDraining).
 */
export const DRAIN_CONTRACT: Contract = {
  applies: (op) => RETRYABLE.has(op.method) && !ALWAYS.has(op.path),
  answers: {
    "503": errorAnswer(
      "This instance is shutting down (a rolling restart): retry, another one will answer.",
      { draining: { code: "unavailable", message: DRAINING_MESSAGE } },
      {
        "X-Request-Id": X_REQUEST_ID,
        "Retry-After": retryAfterHeader(),
        "Cache-Control": NO_STORE_HEADER,
        ...CORS_DOCS,
      },
    ),
  },
};

/**
 * What the server does between SIGTERM and exit (docs/scaling.md "Rolling restarts"). Once
 * begun: `/readyz` answers 503; every response says `Connection: close`, including the ones in
 * progress whose headers are not out yet, so each keep-alive socket closes right after the
 * answer it carries. The listener stays open until no connection has arrived for
 * `DRAIN_QUIET_MS` (server.ts): a new request meanwhile is refused with 503 before any work when
 * its method is one a balancer retries elsewhere (GET, HEAD, OPTIONS), which also tells a
 * balancer without active health checks (nginx) that this instance is failing; any other request
 * (a POST, which must not be retried once sent) is served in full. A socket idle at the signal is
 * not cut either: its client may be writing a request on it this very instant. It closes when
 * its client closes it, after one more answer (with `Connection: close`), or when its keep-alive
 * time runs out, which the client was told and closes before (server.ts's `Keep-Alive`). The
 * process exits when the last socket is gone.
 */
export class Drain {
  #active = false;
  #lastConnection = 0;
  #began = 0;
  /** Connections accepted since the drain began, per half second after it (for the drain's log). */
  readonly #arrivals: number[] = [];
  readonly #sockets = new Set<Socket>();
  /** Handlers of requests other than GET and HEAD still running (their answer may be long sent or cut). */
  readonly #writes = new Set<Promise<unknown>>();

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
      this.#lastConnection = performance.now();
      if (this.#active) {
        const slot = Math.floor((this.#lastConnection - this.#began) / 500);
        this.#arrivals[slot] = (this.#arrivals[slot] ?? 0) + 1;
      }
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  begin(): void {
    this.#active = true;
    this.#began = performance.now();
    this.#lastConnection = this.#began;
    for (const socket of this.#sockets) {
      const res = (socket as { _httpMessage?: ServerResponse })._httpMessage;
      if (res && !res.headersSent) res.shouldKeepAlive = false;
    }
  }

  /**
   * Calls `then` once no connection has arrived for `quietMs`, or at the latest after `maxMs`
   * (with `true`: connections were still arriving). Checked after the event loop's poll phase
   * (setImmediate), so connections already queued in the kernel are accepted, and counted, first.
   */
  whenQuiet(quietMs: number, maxMs: number, then: (stillArriving: boolean) => void): void {
    const until = performance.now() + maxMs;
    const check = () =>
      setImmediate(() => {
        const now = performance.now();
        const quiet = now - this.#lastConnection;
        if (quiet >= quietMs || now >= until) return then(quiet < quietMs);
        setTimeout(check, Math.max(1, Math.min(quietMs - quiet, until - now)));
      });
    check();
  }

  /** Connections accepted since the drain began, per half second (0 where none came). */
  get arrivals(): number[] {
    return Array.from(this.#arrivals, (n) => n ?? 0);
  }

  /** Whether a request arriving now is refused (503 before any work), see the class comment. */
  refuses(req: IncomingMessage): boolean {
    if (!this.#active || !RETRYABLE.has(req.method ?? "")) return false;
    const path = (req.url ?? "").split("?", 1)[0] as string;
    return !ALWAYS.has(path);
  }

  /**
   * Wraps the request listener: while draining, the answer closes its connection, and what
   * `refuses` names goes to `refuse` instead of `next`. The handler of every request that may
   * write (any method but GET and HEAD) is followed until it returns, for `settled`.
   */
  wrap(next: RequestListener, refuse: RequestListener): RequestListener {
    return (req, res) => {
      if (this.#active) {
        res.shouldKeepAlive = false;
        if (this.refuses(req)) return refuse(req, res);
      }
      const running = next(req, res) as unknown;
      if (req.method !== "GET" && req.method !== "HEAD" && running instanceof Promise) this.#follow(running);
    };
  }

  #follow(running: Promise<unknown>): void {
    this.#writes.add(running);
    const done = () => this.#writes.delete(running);
    running.then(done, done);
  }

  /** Handlers of writing requests still running. */
  get writing(): number {
    return this.#writes.size;
  }

  /**
   * Resolves once every writing request's handler has returned, or after `maxMs` (with `false`).
   * A request cut at the shutdown deadline loses its connection at once, but its handler still
   * gives back what the cut job spent and frees its Idempotency-Key: the process closes its
   * stores only after that (server.ts), so a retry elsewhere runs at once.
   */
  async settled(maxMs: number): Promise<boolean> {
    const until = performance.now() + maxMs;
    while (this.#writes.size > 0) {
      const left = until - performance.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([Promise.allSettled([...this.#writes]), timeout]);
      clearTimeout(timer);
    }
    return true;
  }
}
