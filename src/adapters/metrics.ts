import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { Metrics } from "../ports/metrics.js";

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route}`,
 * kept as plain numbers per series and handed to the prom-client registry when it is scraped,
 * in the same exposition prom-client's Counter and Histogram write. Every request records here
 * (the hot lane's too), and prom-client's own metrics validate and hash their label object on
 * every call: about a tenth of a cached lookup's CPU time in the profile. Series are bounded:
 * routes are registered patterns (or "unmatched"), and Node's parser admits few methods.
 */
class RequestSeries {
  private readonly series = new Map<string, Series>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const id = `${method} ${route} ${status}`;
    let s = this.series.get(id);
    if (s === undefined) {
      s = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0),
      };
      this.series.set(id, s);
    }
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++;
    s.buckets[i] = (s.buckets[i] as number) + 1;
  }

  private counterValues(): MetricValue[] {
    return [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count }));
  }

  private histogramValues(): MetricValue[] {
    const name = "http_request_duration_seconds";
    const byRoute = new Map<string, Series>();
    for (const s of this.series.values()) {
      const id = `${s.labels.method} ${s.labels.route}`;
      const into = byRoute.get(id) ?? { ...s, count: 0, sum: 0, buckets: s.buckets.map(() => 0) };
      into.count += s.count;
      into.sum += s.sum;
      s.buckets.forEach((n, i) => {
        into.buckets[i] = (into.buckets[i] as number) + n;
      });
      byRoute.set(id, into);
    }
    const values: MetricValue[] = [];
    for (const s of byRoute.values()) {
      const labels = { method: s.labels.method, route: s.labels.route };
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i] as number;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: s.count, metricName: `${name}_bucket` });
      values.push({ labels, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels, value: s.count, metricName: `${name}_count` });
    }
    return values;
  }

  /** The two metrics as prom-client's registry takes them (name, help, type, get, reset). */
  metrics() {
    const metric = (name: string, help: string, type: "counter" | "histogram", values: () => MetricValue[]) => ({
      name,
      help,
      type,
      aggregator: "sum" as const,
      get: async () => ({ name, help, type, aggregator: "sum" as const, values: values() }),
      reset: () => this.series.clear(),
    });
    return [
      metric("http_requests_total", "HTTP requests by method, route and status", "counter", () => this.counterValues()),
      metric("http_request_duration_seconds", "HTTP request duration by method and route", "histogram", () =>
        this.histogramValues(),
      ),
    ];
  }
}

/** Prometheus metrics for one app instance (its own registry: no module-level singletons). */
export class PromMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests = new RequestSeries();
  private readonly reused = new Counter({
    name: "http_answers_reused_total",
    help: "Requests the hot lane answered from the answer cache without running the app, by route",
    labelNames: ["route"] as const,
    registers: [this.registry],
  });
  private readonly reusedChildren = new Map<string, { inc(): void }>();
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
    for (const metric of this.requests.metrics()) this.registry.registerMetric(metric as never);
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
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
