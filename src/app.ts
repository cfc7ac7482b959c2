import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "./app-deps.js";
import { registerAccount } from "./features/account/index.js";
import { billingOf, registerBillingWebhook } from "./features/billing/index.js";
import { registerContact } from "./features/contact/route.js";
import { registerHolidays } from "./features/holidays/route.js";
import { registerHome } from "./features/home/route.js";
import { recordKeyedCalls, registerUsage } from "./features/keys/index.js";
import { registerMoon } from "./features/moon/route.js";
import { contractDocument } from "./features/ops/contract.js";
import { registerDocs } from "./features/ops/docs.js";
import { registerOps } from "./features/ops/route.js";
import { PlaceLookup, registerPostcode } from "./features/postcode/index.js";
import { useObservedDeltaT } from "./features/shared/delta-t.js";
import { registerSun } from "./features/sun/route.js";
import { registerVat } from "./features/vat/route.js";
import { registerVibe } from "./features/vibe/route.js";
import { registerWeather } from "./features/weather/route.js";
import { recordAnswers } from "./http/answer-cache.js";
import { bodyLimit } from "./http/body-limit.js";
import { publicCors } from "./http/cors.js";
import { demoTier } from "./http/demo-tier.js";
import { DRAIN_CONTRACT } from "./http/drain.js";
import { Envelope, envelope } from "./http/envelope.js";
import { ApiError, RENDERED_ERRORS, renderError, toApiError } from "./http/errors.js";
import { requestLog } from "./http/failure.js";
import { CACHED_LOOKUPS, httpCache } from "./http/http-cache.js";
import { allowedMethods, METHOD_NOT_ALLOWED_CONTRACT } from "./http/method-not-allowed.js";
import { noNulInJson } from "./http/no-nul.js";
import { queryAliases } from "./http/query-aliases.js";
import { retryAfterOn429 } from "./http/retry-after.js";
import type { AppEnv } from "./http/types.js";
import { VALIDATION_CONTRACT, validationError } from "./http/validation.js";

export type App = OpenAPIHono<AppEnv>;

/** The whole HTTP surface. No I/O, no environment reads: everything comes through `deps`. */
export function createApp(deps: AppDeps): App {
  // astronomy-engine keeps its ΔT (TT − UT) function process-wide: set here, once per process in
  // effect (the same pure function each time), so every moon and sun instant uses observed ΔT.
  useObservedDeltaT();
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) throw validationError(result.error, result.target, c);
    },
  });
  // Request id, client, CORS and RateLimit headers, the log line and metrics: the envelope's,
  // shared with the hot lane (src/http/hot-lane.ts), which may already have met the request.
  const env = Envelope.of(deps);
  app.use(envelope(env, deps.logger));
  app.use(retryAfterOn429());
  // Classify reads its JSON off the socket with the same cap (http/json-body.ts).
  app.use(bodyLimit(deps.config.BODY_LIMIT_BYTES, ["/v1/vibe/classify"]));
  app.use(noNulInJson());

  // Before the limits: a browser's preflight is answered (204) without counting against anything.
  // Every call made with an account's key goes to its call log (after its answer, in batches).
  if (deps.activity) app.use("/v1/*", recordKeyedCalls(deps.activity, deps.now));
  app.use("/v1/*", publicCors());
  app.use("/v1/*", queryAliases());
  registerOps(app, deps);
  registerDocs(app);
  registerHome(app, deps.config.DEMO_HOURLY_LIMIT, deps.payments);
  app.use("/v1/*", deps.keyGuesses.middleware());
  // Demo tier: every /v1 GET/HEAD, registered before the feature routes.
  app.use(
    "/v1/*",
    demoTier({
      limiter: deps.limiter,
      rule: env.demo,
      keys: deps.keys,
    }),
  );
  // Answers a route marks reusable are kept, serialised, for the hot lane (src/http/hot-lane.ts).
  if (deps.answers) app.use("/v1/*", recordAnswers(deps.answers, deps.now));
  // Deterministic lookups: ETag / If-None-Match → 304, Cache-Control by whether the query pins them.
  for (const { path, pinnedBy, maxAgeSec } of CACHED_LOOKUPS) app.use(path, httpCache(pinnedBy, maxAgeSec, deps.now));
  // Feature routes register here.
  registerMoon(app, deps);
  registerSun(app, deps);
  registerHolidays(app, deps);
  registerVat(app, deps);
  const places = new PlaceLookup(deps.postcodes, deps.cache);
  registerPostcode(app, deps, places);
  registerWeather(app, deps, places);
  registerAccount(app, deps);
  registerContact(app, deps);
  registerVibe(app, deps);
  registerUsage(app, deps);
  registerBillingWebhook(app, deps, billingOf(deps).life);

  const documentConfig = {
    openapi: "3.1.0" as const,
    info: {
      title: "Almanac",
      version: "1.0.0",
      description:
        `Utility lookups (demo tier: ${deps.config.DEMO_HOURLY_LIMIT} GET calls per hour per client), paid vibe classification and a contact desk. ` +
        `Limits per client count an IPv4 client by its address and an IPv6 client by its /${deps.config.CLIENT_IPV6_PREFIX} network. ` +
        'Every error is `{"error":{"code","message","reason"?,"details"?,"request_id"}}`; ' +
        "every response carries `X-Request-Id`.",
      contact: { name: "Almanac contact desk", url: `${deps.config.PUBLIC_URL}/` },
      // The licence of this API description (and of the clients generated from it).
      license: { name: "MIT", identifier: "MIT" },
    },
    // PUBLIC_URL first: a generated client (Node has no base URL to resolve "/" against) calls
    // the deployment. The relative one is for /docs, whose "Try it out" calls whichever host
    // served the page (docs.ts puts it first there).
    servers: [
      { url: deps.config.PUBLIC_URL, description: "Production: this deployment (PUBLIC_URL).", "x-internal": false },
      {
        url: "/",
        description: "Local or production: the host that served this document (the /docs page).",
        "x-internal": false,
      },
    ],
  };
  // Built once, on first request (every route is registered by then), then post-processed: each
  // operation gets what the middleware on its path adds (http/contract.ts), read off the chain.
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get("/v1/openapi.json", (c) => {
    document ??= contractDocument(app.getOpenAPI31Document(documentConfig), {
      chain: app.routes,
      // The defaultHook, notFound and onError below.
      inner: [VALIDATION_CONTRACT, METHOD_NOT_ALLOWED_CONTRACT],
      renderer: RENDERED_ERRORS,
      // server.ts wraps the listener in the drain.
      edge: [DRAIN_CONTRACT],
    });
    return c.json(document);
  });

  const allowed = allowedMethods(app);
  app.notFound((c) => {
    const methods = allowed(c.req.path);
    // 405 only when the path exists for other methods; a route's own notFound() stays 404.
    if (methods.length > 0 && !methods.includes(c.req.method)) {
      return renderError(
        c,
        new ApiError("method_not_allowed", `Method ${c.req.method} is not allowed on ${c.req.path}.`, {
          headers: { Allow: methods.join(", ") },
        }),
      );
    }
    return renderError(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`));
  });

  app.onError((err, c) => {
    const apiError = toApiError(err);
    if (apiError.code === "internal") {
      requestLog(c).error({ err }, "unhandled error");
    }
    return renderError(c, apiError);
  });

  return app;
}
