import { randomUUID } from "node:crypto";
import { type IncomingMessage, ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Logger } from "pino";
import type { AppDeps } from "../app-deps.js";
import type { Metrics } from "../ports/metrics.js";
import type { LimitRule } from "../ports/rate-limiter.js";
import { type ClientAddressing, clientAddressing, clientOf } from "./client-ip.js";
import { type Contract, type Documented, documented, X_REQUEST_ID } from "./contract.js";
import { CORS_DOCS, CORS_HEADERS } from "./cors.js";
import { demoRule } from "./demo-tier.js";
import { codeForStatus } from "./errors.js";
import type { Failure } from "./failure.js";
import { ratePolicy, rateState } from "./rate-limit-headers.js";
import type { AppEnv, Exchange } from "./types.js";

/** What the request's log line and metrics need besides the exchange. */
export interface Outcome {
  method: string;
  /** The route's pattern (or `unmatched`): one label per route, whatever the URL. */
  route: string;
  path: string;
  status: number;
  error?: Failure;
}

const HANDED = Symbol("almanac.exchange");
type Carrier = { [HANDED]?: Exchange };

/**
 * The envelope of every request, in one place for every step that answers one (the app's
 * middleware in app.ts and the hot lane in hot-lane.ts): the headers a response carries besides
 * its own — `X-Request-Id`, on /v1 the CORS pair, and the demo tier's `RateLimit-Policy` /
 * `RateLimit` once it decided — and what a request leaves behind: one metrics observation and
 * one log line. test/http/one-pipeline.test.ts checks the two steps send the same header set.
 */
export class Envelope {
  readonly demo: LimitRule;
  private readonly policy: string;

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly addressing: ClientAddressing,
    demoHourlyLimit: number,
  ) {
    this.demo = demoRule(demoHourlyLimit);
    this.policy = ratePolicy(this.demo);
  }

  static of(deps: Pick<AppDeps, "logger" | "metrics" | "config">): Envelope {
    return new Envelope(deps.logger, deps.metrics, clientAddressing(deps.config), deps.config.DEMO_HOURLY_LIMIT);
  }

  /** Meets a request: a fresh id, the clock, and its client (`header` reads a request header). */
  begin(remoteAddress: string | undefined, header: (name: string) => string | undefined): Exchange {
    const start = performance.now();
    const { ip, key } = clientOf(remoteAddress, header, this.addressing);
    return { id: randomUUID(), start, ip, key };
  }

  /** Hands `ex` on with the node:http request, for the next step to carry on with. */
  static handOn(req: IncomingMessage, ex: Exchange): void {
    (req as Carrier)[HANDED] = ex;
  }

  /** The exchange an earlier step handed on with `req`, if any. */
  static handedOn(req: IncomingMessage | undefined): Exchange | undefined {
    return (req as Carrier | undefined)?.[HANDED];
  }

  /**
   * Calls `set` with each header the response to `ex` carries besides its own. `corsFor`: the
   * request is a non-preflight /v1 request (a preflight's CORS headers are its whole answer).
   */
  headers(ex: Exchange, corsFor: boolean, set: (name: string, value: string) => void): void {
    set("x-request-id", ex.id);
    if (corsFor) for (const [name, value] of CORS_HEADERS) set(name, value);
    if (ex.rate) {
      set("ratelimit-policy", this.policy);
      set("ratelimit", rateState(this.demo, ex.rate));
    }
  }

  /** The request's metrics observation and log line (error level for a 5xx). */
  finish(ex: Exchange, o: Outcome): void {
    const ms = performance.now() - ex.start;
    this.metrics.observeRequest(o.method, o.route, o.status, ms / 1000);
    const error = o.status >= 500;
    if (!error && !this.logger.isLevelEnabled("info")) return;
    const line = {
      request_id: ex.id,
      method: o.method,
      route: o.route,
      path: o.path,
      status: o.status,
      duration_ms: Math.round(ms * 100) / 100,
      ip: ex.ip,
      error: o.error,
    };
    if (error) this.logger.error(line, "request");
    else this.logger.info(line, "request");
  }
}

/**
 * Whether the answer to `method path` carries the CORS pair: every /v1 answer but a preflight's
 * (whose CORS headers are its whole answer, cors.ts), errors included.
 */
export const corsFor = (method: string, path: string): boolean =>
  method !== "OPTIONS" && (path.startsWith("/v1/") || path === "/v1");

/**
 * The envelope's headers in the document: the request id on every answer, the CORS pair on /v1.
 * (Its RateLimit headers are the demo tier's decision, which that middleware declares.)
 */
const ENVELOPE_CONTRACT: Contract[] = [
  { stamps: [{ headers: { "X-Request-Id": X_REQUEST_ID } }] },
  { applies: (op) => corsFor(op.method, op.path), stamps: [{ headers: CORS_DOCS }] },
];

/**
 * The envelope in the app: its first middleware. Carries on with the exchange the hot lane handed
 * on (a request it did not answer) or meets the request, and once the app has answered, puts the
 * envelope's headers on the answer and writes its log line and metrics. Over node:http the
 * headers go straight onto the node response, merged into the app's when it is written, rather
 * than into the Response's `Headers` (each `set` there validates and re-sorts).
 */
export function envelope(env: Envelope, logger: Logger): Documented<MiddlewareHandler<AppEnv>> {
  return documented<MiddlewareHandler<AppEnv>>(async (c, next) => {
    const incoming = c.env?.incoming;
    const ex = Envelope.handedOn(incoming) ?? env.begin(incoming?.socket?.remoteAddress, (name) => c.req.header(name));
    c.set("exchange", ex);
    c.set("requestId", ex.id);
    // Logged by address; per-client limits count by clientKey (an IPv6 client's network).
    c.set("clientIp", ex.ip);
    c.set("clientKey", ex.key);
    c.set("baseLogger", logger);
    await next();
    const { method, path } = c.req;
    const outgoing = c.env?.outgoing;
    if (outgoing instanceof ServerResponse && !outgoing.headersSent) {
      env.headers(ex, corsFor(method, path), (name, value) => outgoing.setHeader(name, value));
    } else {
      env.headers(ex, corsFor(method, path), (name, value) => setResponseHeader(c, name, value));
    }
    // Unmatched paths are one label, so hostile URLs cannot blow up metric cardinality.
    const route = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path ?? "unmatched";
    const status = c.res.status;
    env.finish(ex, { method, route, path, status, error: failureOf(c, status) });
  }, ENVELOPE_CONTRACT);
}

/** The request's failure for its log line: what was noted, else the code of its status (4xx/5xx). */
function failureOf(c: Context, status: number): Failure | undefined {
  const noted = c.get("failure") as Failure | undefined;
  if (noted) return noted;
  if (status < 400) return undefined;
  return {
    code: codeForStatus(status),
    ...(status >= 500 && { cause: { kind: "unrecorded", message: "no cause was recorded" } }),
  };
}

/** Sets a header on the response leaving the app, copying it first when its headers are immutable. */
export function setResponseHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    // Headers of a fetched Response (e.g. better-auth's) are immutable: copy it once.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(name, value);
  }
}
