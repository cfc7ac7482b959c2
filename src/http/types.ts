import type { IncomingMessage } from "node:http";
import type { HttpBindings } from "@hono/node-server";
import type { Logger } from "pino";
import type { LimitDecision } from "../ports/rate-limiter.js";
import type { Client } from "./client-ip.js";
import type { Failure } from "./failure.js";

/**
 * One request on its way through the server: its id, when it arrived, who sent it, and the demo
 * tier's decision once taken. Begun by whichever step meets the request first (the hot lane, or
 * the app's `envelope` middleware) and handed on, so a request has one id, one clock and is
 * counted once, whichever step answers it.
 */
export interface Exchange extends Client {
  readonly id: string;
  /** performance.now() when the request was met. */
  readonly start: number;
  /** The demo tier's decision for this request (demo-tier.ts, or the hot lane). */
  rate?: LimitDecision;
}

/** Per-request variables set by the cross-cutting middleware. */
export interface AppVariables {
  /** The request on its way through the server (envelope.ts). */
  exchange: Exchange;
  requestId: string;
  /** The client's address, as logged. */
  clientIp: string;
  /** What per-client limits count by: the IPv4 address, or the IPv6 network (CLIENT_IPV6_PREFIX). */
  clientKey: string;
  /** Set by a route whose answer to this exact request target holds until then (epoch ms); see answer-cache.ts. */
  reuseUntil?: number;
  /** Set by bodyLimit on self-capped routes: the body is to be read off this socket (json-body.ts). */
  bodyOnSocket?: IncomingMessage;
  /** The app's logger (set by the envelope); handlers log through requestLog(c), which adds request_id. */
  baseLogger: Logger;
  /** The request-scoped logger, made on first use by requestLog(c). */
  log?: Logger;
  /** The account key a call presented, once verified to one (key-auth.ts verifyKey): the call log's. */
  calledKey?: { keyId: string; ownerId: string };
  /** Set by the error renderer (noteFailure): the code answered and, for a 5xx, its cause, for the log line. */
  failure?: Failure;
}

export type AppEnv = { Bindings: HttpBindings; Variables: AppVariables };
