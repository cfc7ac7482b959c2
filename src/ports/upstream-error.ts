export type UpstreamFailureKind = "timeout" | "network" | "status" | "redirect" | "garbage" | "too_large";

/** An upstream provider failed; routes answer 502 `upstream_error` without the details. */
export class UpstreamError extends Error {
  constructor(
    readonly upstream: string,
    readonly kind: UpstreamFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${upstream}: ${message}`, options);
    this.name = "UpstreamError";
  }
}
