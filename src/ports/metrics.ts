/** A counter or gauge the contact outbox moves. */
interface Count {
  inc(): void;
}

/** What the app records: requests, upstream failures, limiter fallbacks, the contact outbox. */
export interface Metrics {
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The hot lane answered a request from the answer cache (it is observed as a request too). */
  answerReused(route: string): void;
  upstreamError(upstream: string, kind: string): void;
  limiterFallback(limiter: string): void;
  readonly contactOutbox: { sentTotal: Count; failedTotal: Count; pending: { set(n: number): void } };
  /** The exposition for `/metrics`. */
  render(): Promise<{ contentType: string; body: string }>;
}
