import type { HttpBindings } from "@hono/node-server";

/** Per-request variables set by the cross-cutting middleware. */
export interface AppVariables {
  requestId: string;
  clientIp: string;
}

export type AppEnv = { Bindings: HttpBindings; Variables: AppVariables };
