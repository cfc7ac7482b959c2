export type UpstreamFailureKind = "timeout" | "network" | "status" | "redirect" | "garbage" | "too_large";

/** An upstream provider failed; routes answer 502 `upstream_error` without the details. */
export class UpstreamError extends Error {
  /** The upstream's HTTP status, when it answered with one that is a failure. */
  readonly status?: number;

  constructor(
    readonly upstream: string,
    readonly kind: UpstreamFailureKind,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`${upstream}: ${message}`, options);
    this.name = "UpstreamError";
    this.status = options?.status;
  }
}
