import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Metrics } from "../ports/metrics.js";

/** Prometheus metrics for one app instance (its own registry: no module-level singletons). */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request duration by method and route",
    labelNames: ["method", "route"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly reused = new Counter({
    name: "http_answers_reused_total",
    help: "Requests the hot lane answered from the answer cache without running the app, by route",
    labelNames: ["route"] as const,
    registers: [this.registry],
  });
  private readonly reusedChildren = new Map<string, { inc(): void }>();
  /** Label children by "method route status": prom-client hashes a label object on every call otherwise. */
  private readonly children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  private readonly upstreamErrors = new Counter({
    name: "upstream_errors_total",
    help: "Failed calls to upstream services, by upstream and kind of failure",
    labelNames: ["upstream", "kind"] as const,
    registers: [this.registry],
  });
  private readonly limiterFallbacks = new Counter({
    name: "rate_limiter_fallback_total",
    help: "Rate-limit decisions taken by the in-process limiter because Redis was unreachable",
    labelNames: ["limiter"] as const,
    registers: [this.registry],
  });

  /** The contact outbox (src/features/contact/outbox.ts). */
  readonly contactOutbox = {
    sentTotal: new Counter({
      name: "contact_outbox_sent_total",
      help: "Contact messages the outbox resent successfully (resumed pending or retried failed)",
      registers: [this.registry],
    }),
    failedTotal: new Counter({
      name: "contact_outbox_failed_total",
      help: "Outbox resend attempts the mail lane refused",
      registers: [this.registry],
    }),
    pending: new Gauge({
      name: "contact_outbox_pending",
      help: "Contact messages not sent yet with attempts left, at the outbox's last pass",
      registers: [this.registry],
    }),
  };

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const id = `${method} ${route} ${status}`;
    let child = this.children.get(id);
    if (child === undefined) {
      // Bounded: routes are the registered patterns (or "unmatched") and methods/statuses are few.
      child = {
        count: this.requests.labels(method, route, String(status)),
        time: this.duration.labels(method, route),
      };
      this.children.set(id, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  }

  answerReused(route: string): void {
    let child = this.reusedChildren.get(route);
    if (child === undefined) {
      child = this.reused.labels(route);
      this.reusedChildren.set(route, child);
    }
    child.inc();
  }

  upstreamError(upstream: string, kind: string): void {
    this.upstreamErrors.inc({ upstream, kind });
  }

  limiterFallback(limiter: string): void {
    this.limiterFallbacks.inc({ limiter });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
