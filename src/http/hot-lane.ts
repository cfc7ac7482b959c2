import type { RequestListener } from "node:http";
import type { Logger } from "pino";
import type { AppDeps } from "../app-deps.js";
import type { Metrics } from "../ports/metrics.js";
import type { RateLimiter } from "../ports/rate-limiter.js";
import { type AnswerCache, normaliseTarget } from "./answer-cache.js";
import { HEADERS_MAX } from "./contract.js";
import { demoTierCall } from "./demo-tier.js";
import { Envelope } from "./envelope.js";
import { etagMatches } from "./http-cache.js";

/** The hot lane over `deps`, or undefined when the answer cache is off (ANSWER_CACHE_MB=0). */
export function hotLaneFor(
  deps: Pick<AppDeps, "answers" | "limiter" | "metrics" | "logger" | "now" | "config">,
): ((app: RequestListener) => RequestListener) | undefined {
  const { answers, limiter, metrics, logger, now } = deps;
  if (!answers) return undefined;
  const envelope = Envelope.of(deps);
  return (app) => hotLane({ answers, limiter, metrics, logger, now, envelope }, app);
}

export interface HotLaneDeps {
  answers: AnswerCache;
  limiter: RateLimiter;
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
  /** The same envelope as the app's: one id, the same headers, one log line and observation. */
  envelope: Envelope;
}

/**
 * The hot lane: the first step of the request pipeline, at the node:http listener. A keyless
 * `GET` whose normalised target has a live entry in the answer cache is answered here, without
 * building a Request, running the middleware chain, validating, computing or serialising.
 * Everything else goes to the app (`fallback`).
 *
 * What every response carries and what every request leaves behind is the envelope's
 * (envelope.ts), for this step as for the app: the request is met once (id, clock, client),
 * counted against the demo tier on the same limiter and rule — a refusal is handed on to the app
 * with the exchange, decision included, so the one error renderer answers it and it is counted
 * once — and answered with the stored headers plus the envelope's, `If-None-Match` getting a 304
 * as the app would send it; then it is logged and measured like any other request (plus
 * `http_answers_reused_total`). test/http/one-pipeline.test.ts compares both steps' full header
 * sets.
 */
export function hotLane(deps: HotLaneDeps, fallback: RequestListener): RequestListener {
  const { envelope } = deps;
  return (req, res) => {
    const url = req.url;
    // Only an anonymous GET under the demo tier (demoTierCall decides which) may have a kept answer.
    if (
      req.method !== "GET" ||
      url === undefined ||
      demoTierCall("GET", url, req.headers.authorization) !== "anonymous"
    ) {
      return fallback(req, res);
    }
    // Met here, once: the app carries on with this exchange when the answer is not kept.
    const headers = req.headers;
    const ex = envelope.begin(req.socket.remoteAddress, (name) => headers[name] as string | undefined);
    Envelope.handOn(req, ex);
    const answer = deps.answers.get(normaliseTarget(url), deps.now().getTime());
    // An If-None-Match longer than the document allows is the app's to refuse.
    const tooLong = (headers["if-none-match"]?.length ?? 0) > HEADERS_MAX;
    if (answer === undefined || tooLong) return fallback(req, res);
    deps.limiter
      .consume(envelope.demo, ex.key)
      .then(
        (d) => {
          ex.rate = d;
          if (!d.allowed) return fallback(req, res);
          const ifNoneMatch = headers["if-none-match"];
          const notModified =
            answer.etag !== undefined && ifNoneMatch !== undefined && etagMatches(answer.etag, ifNoneMatch);
          const out: string[] = [];
          for (const [name, value] of answer.headers) {
            if (!notModified || name !== "content-type") out.push(name, value);
          }
          envelope.headers(ex, true, (name, value) => out.push(name, value));
          const status = notModified ? 304 : 200;
          if (!notModified) out.push("content-length", String(answer.body.length));
          res.writeHead(status, out);
          res.end(notModified ? undefined : answer.body);
          envelope.finish(ex, { method: "GET", route: answer.route, path: url.split("?", 1)[0] as string, status });
          deps.metrics.answerReused(answer.route);
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
