import type { IncomingMessage } from "node:http";
import type { HttpBindings } from "@hono/node-server";

/** Per-request variables set by the cross-cutting middleware. */
export interface AppVariables {
  requestId: string;
  clientIp: string;
  /** Set by a route whose answer to this exact request target holds until then (epoch ms); see answer-cache.ts. */
  reuseUntil?: number;
  /** Set by bodyLimit on self-capped routes: the body is to be read off this socket (json-body.ts). */
  bodyOnSocket?: IncomingMessage;
}

export type AppEnv = { Bindings: HttpBindings; Variables: AppVariables };
