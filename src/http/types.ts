import type { IncomingMessage } from "node:http";
import type { HttpBindings } from "@hono/node-server";

/** Per-request variables set by the cross-cutting middleware. */
export interface AppVariables {
  requestId: string;
  /** The client's address, as logged. */
  clientIp: string;
  /** What per-client limits count by: the IPv4 address, or the IPv6 network (CLIENT_IPV6_PREFIX). */
  clientKey: string;
  /** Set by a route whose answer to this exact request target holds until then (epoch ms); see answer-cache.ts. */
  reuseUntil?: number;
  /** Set by bodyLimit on self-capped routes: the body is to be read off this socket (json-body.ts). */
  bodyOnSocket?: IncomingMessage;
}

export type AppEnv = { Bindings: HttpBindings; Variables: AppVariables };
