import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { PromMetrics } from "../../src/adapters/metrics.js";

/** The request series' lines of an exposition. */
const requestLines = (text: string) => text.split("\n").filter((l) => /^(# (HELP|TYPE) )?http_request/.test(l));

describe("request metrics", () => {
  it("write exactly what prom-client's own Counter and Histogram write for the same requests", async () => {
    const ours = new PromMetrics();
    const reference = new Registry();
    const count = new Counter({
      name: "http_requests_total",
      help: "HTTP requests by method, route and status",
      labelNames: ["method", "route", "status"],
      registers: [reference],
    });
    const time = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request duration by method and route",
      labelNames: ["method", "route"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [reference],
    });
    const observed: [string, string, number, number][] = [
      ["GET", "/v1/moon", 200, 0.0003],
      ["GET", "/v1/moon", 200, 0.001], // exactly on a bound: counted in it (le)
      ["GET", "/v1/moon", 304, 0.007],
      ["POST", "/v1/vibe/classify", 401, 9], // above every bound: +Inf only
      ["GET", "unmatched", 404, 0.0005],
      ["GET", "/v1/moon", 200, 0.02],
    ];
    for (const [method, route, status, seconds] of observed) {
      ours.observeRequest(method, route, status, seconds);
      count.inc({ method, route, status: String(status) });
      time.observe({ method, route }, seconds);
    }
    const expected = requestLines(await reference.metrics());
    expect(expected.length).toBeGreaterThan(40);
    expect(requestLines((await ours.render()).body)).toEqual(expected);
  });
});
