import type { Hono } from "hono";
import type { AppDeps } from "../../deps.js";
import type { AppEnv } from "../../http/types.js";

/** Operations outside /v1: liveness, readiness, Prometheus metrics. */
export function registerOps(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.get("/readyz", async (c) => {
    const [database, redis] = await Promise.all([
      deps.database.ping(),
      deps.redis ? deps.limiter.ready() : Promise.resolve(null),
    ]);
    const checks: Record<string, "ok" | "down"> = { database: database ? "ok" : "down" };
    if (redis !== null) checks.redis = redis ? "ok" : "down";
    const ready = Object.values(checks).every((v) => v === "ok");
    return c.json({ status: ready ? "ready" : "not_ready", checks }, ready ? 200 : 503);
  });

  app.get("/metrics", async (c) => {
    const { contentType, body } = await deps.metrics.render();
    return c.body(body, 200, { "Content-Type": contentType });
  });
}
