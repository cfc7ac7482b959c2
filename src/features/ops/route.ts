import { timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import type { AppDeps } from "../../app-deps.js";
import { ApiError } from "../../http/errors.js";
import type { AppEnv } from "../../http/types.js";

/** Operations outside /v1: liveness, readiness, Prometheus metrics. */
export function registerOps(
  app: Hono<AppEnv>,
  deps: Pick<AppDeps, "config" | "database" | "drain" | "limiter" | "metrics" | "redis">,
): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.get("/readyz", async (c) => {
    // Shutting down: not ready, whatever the stores say, so a balancer stops sending at once.
    if (deps.drain.active) return c.json({ status: "not_ready", checks: { shutdown: "draining" } }, 503);
    const [database, redis] = await Promise.all([
      deps.database.ping(),
      deps.redis ? deps.limiter.ready() : Promise.resolve(null),
    ]);
    const checks: Record<string, "ok" | "down"> = { database: database ? "ok" : "down" };
    if (redis !== null) checks.redis = redis ? "ok" : "down";
    const ready = Object.values(checks).every((v) => v === "ok");
    return c.json({ status: ready ? "ready" : "not_ready", checks }, ready ? 200 : 503);
  });

  const metricsToken = deps.config.METRICS_TOKEN ? Buffer.from(`Bearer ${deps.config.METRICS_TOKEN}`) : undefined;
  app.get("/metrics", async (c) => {
    if (metricsToken) {
      const sent = Buffer.from(c.req.header("Authorization") ?? "");
      if (sent.length !== metricsToken.length || !timingSafeEqual(sent, metricsToken)) {
        throw new ApiError("unauthorized", "Metrics need the bearer token set in METRICS_TOKEN.", {
          headers: { "WWW-Authenticate": 'Bearer realm="metrics"' },
        });
      }
    }
    const { contentType, body } = await deps.metrics.render();
    return c.body(body, 200, { "Content-Type": contentType });
  });
}
