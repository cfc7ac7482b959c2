import { randomUUID } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { AppDeps } from "../deps.js";
import type { Metrics } from "../ports/metrics.js";
import type { LimitDecision, RateLimiter } from "../ports/rate-limiter.js";
import { type Answer, type AnswerCache, normaliseTarget } from "./answer-cache.js";
import { type ClientAddressing, clientAddressing, clientOfIncoming } from "./client-ip.js";
import { CORS_HEADERS } from "./cors.js";
import { demoRule } from "./demo-tier.js";
import { ratePolicy, rateState } from "./rate-limit-headers.js";

/** The hot lane over `deps`, or undefined when the answer cache is off (ANSWER_CACHE_MB=0). */
export function hotLaneFor(deps: AppDeps): ((app: RequestListener) => RequestListener) | undefined {
  const { answers, limiter, metrics, logger, now, config } = deps;
  if (!answers) return undefined;
  const opts = { answers, limiter, metrics, logger, now };
  const settings = { addressing: clientAddressing(config), demoHourlyLimit: config.DEMO_HOURLY_LIMIT };
  return (app) => hotLane({ ...opts, ...settings }, app);
}

export interface HotLaneDeps {
  answers: AnswerCache;
  limiter: RateLimiter;
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
  addressing: ClientAddressing;
  demoHourlyLimit: number;
}

/** Matches If-None-Match the way hono/etag does: `*`, or any listed tag equal to ours (weak or strong). */
function matches(etag: string, ifNoneMatch: string): boolean {
  if (ifNoneMatch === "*") return true;
  const ours = etag.startsWith("W/") ? etag.slice(2) : etag;
  return ifNoneMatch.match(/"[^"]*"/g)?.some((tag) => tag === ours) ?? false;
}

/**
 * The hot lane: a keyless `GET` whose normalised target has a live entry in the answer cache is
 * answered here, at the node:http listener, without building a Request, running the middleware
 * chain, validating, computing or serialising. Everything else goes to the app (`fallback`).
 *
 * The contract still holds, and test/http/hot-lane.test.ts compares both lanes header by header:
 * the request is counted against the demo tier (same limiter, rule and RateLimit headers; a
 * refusal is handed to the app with the decision already taken, so it is rendered by the one
 * error renderer and not counted twice), it gets an `X-Request-Id`, `If-None-Match` gets a 304
 * with the headers the app would send, and it is logged and measured like any other request
 * (plus `http_answers_reused_total`).
 */
export function hotLane(deps: HotLaneDeps, fallback: RequestListener): RequestListener {
  const rule = demoRule(deps.demoHourlyLimit);
  const policy = ratePolicy(rule);

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    answer: Answer,
    d: LimitDecision,
    ip: string,
    start: number,
  ) => {
    const id = randomUUID();
    const ifNoneMatch = req.headers["if-none-match"];
    const notModified = answer.etag !== undefined && ifNoneMatch !== undefined && matches(answer.etag, ifNoneMatch);
    const headers: string[] = [];
    for (const [name, value] of answer.headers) {
      if (!notModified || name !== "content-type") headers.push(name, value);
    }
    for (const [name, value] of CORS_HEADERS) headers.push(name, value);
    headers.push("ratelimit-policy", policy, "ratelimit", rateState(rule, d), "x-request-id", id);
    const status = notModified ? 304 : 200;
    if (!notModified) headers.push("content-length", String(answer.body.length));
    res.writeHead(status, headers);
    res.end(notModified ? undefined : answer.body);

    const ms = performance.now() - start;
    deps.metrics.observeRequest("GET", answer.route, status, ms / 1000);
    deps.metrics.answerReused(answer.route);
    if (deps.logger.isLevelEnabled("info")) {
      // The line observe.ts writes for the app's requests.
      const path = req.url?.split("?", 1)[0];
      const duration_ms = Math.round(ms * 100) / 100;
      deps.logger.info(
        { request_id: id, method: "GET", route: answer.route, path, status, duration_ms, ip },
        "request",
      );
    }
  };

  return (req, res) => {
    const url = req.url;
    if (
      req.method !== "GET" ||
      url === undefined ||
      !url.startsWith("/v1/") ||
      req.headers.authorization !== undefined
    ) {
      return fallback(req, res);
    }
    const start = performance.now();
    const answer = deps.answers.get(normaliseTarget(url), deps.now().getTime());
    if (answer === undefined) return fallback(req, res);
    const { ip, key } = clientOfIncoming(req, deps.addressing);
    deps.limiter
      .consume(rule, key)
      .then(
        (d) => {
          if (d.allowed) return send(req, res, answer, d, ip, start);
          deps.answers.counted.set(req, d);
          return fallback(req, res);
        },
        // The limiter failed: the app's own path deals with that (and counts afresh).
        () => fallback(req, res),
      )
      .catch((err: unknown) => {
        // Never an unhandled rejection (it would stop the process): the app answers if nothing
        // was sent yet, else the connection is cut.
        deps.logger.error({ err }, "hot lane failed");
        if (res.headersSent) res.destroy();
        else fallback(req, res);
      });
  };
}
