import { LRUCache } from "lru-cache";
import type { Metrics } from "../ports/metrics.js";
import type { RegistrationResult, VatRegistry } from "../ports/vat-registry.js";
import { BodyTooLarge, readCapped } from "./upstream-http.js";

/** VIES member-state codes (EL for Greece, XI for Northern Ireland). */
export const VIES_COUNTRIES = new Set(
  "AT BE BG CY CZ DE DK EE EL ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK XI".split(" "),
);

export interface ViesOptions {
  /** e.g. https://ec.europa.eu/taxation_customs/vies/rest-api */
  baseUrl: string;
  timeoutMs: number;
  /** Largest answer body read (UPSTREAM_MAX_BYTES). */
  maxBytes: number;
  metrics: Metrics;
}

const unknown = (reason: string): RegistrationResult => ({
  status: "unknown",
  name: null,
  address: null,
  checked_at: null,
  reason,
});

/** VIES leaves withheld fields as "---" (or empty). */
const field = (v: unknown): string | null =>
  typeof v === "string" && v.trim() && v.trim() !== "---" ? v.trim() : null;

/**
 * The VIES REST API: `POST {base}/check-vat-number` with `{"countryCode","vatNumber"}`, answered
 * by `{countryCode, vatNumber, requestDate, valid, requestIdentifier, name, address, …}` or, on a
 * failure (sometimes with HTTP 200), `{"actionSucceed":false,"errorWrappers":[{"error":"MS_UNAVAILABLE"}]}`.
 * Only an explicit `valid:false` is `invalid`; every failure is `unknown`.
 */
export class ViesRegistry implements VatRegistry {
  readonly name = "VIES";

  constructor(private readonly opts: ViesOptions) {}

  covers(country: string): boolean {
    return VIES_COUNTRIES.has(country);
  }

  async check(country: string, number: string): Promise<RegistrationResult> {
    const fail = (kind: string): RegistrationResult => {
      this.opts.metrics.upstreamError("vies", kind);
      return unknown(kind);
    };
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    let body: unknown;
    try {
      const res = await fetch(`${this.opts.baseUrl.replace(/\/+$/, "")}/check-vat-number`, {
        method: "POST",
        signal,
        redirect: "manual",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ countryCode: country, vatNumber: number }),
      });
      let text: string;
      try {
        text = await readCapped(res, this.opts.maxBytes);
      } catch (err) {
        if (err instanceof BodyTooLarge) return fail("too_large");
        throw err;
      }
      try {
        body = JSON.parse(text);
      } catch {
        return fail(res.ok ? "garbage" : "status");
      }
      if (!res.ok && !isErrorEnvelope(body)) return fail("status");
    } catch {
      return fail(signal.aborted ? "timeout" : "network");
    }
    if (isErrorEnvelope(body)) {
      const code = body.errorWrappers?.find((w) => typeof w?.error === "string")?.error;
      this.opts.metrics.upstreamError("vies", "refused");
      return unknown(code ?? "SERVICE_UNAVAILABLE");
    }
    if (typeof body !== "object" || body === null || typeof (body as { valid?: unknown }).valid !== "boolean") {
      return fail("garbage");
    }
    const answer = body as { valid: boolean; name?: unknown; address?: unknown; requestDate?: unknown };
    return {
      status: answer.valid ? "valid" : "invalid",
      name: field(answer.name),
      address: field(answer.address),
      checked_at: typeof answer.requestDate === "string" ? answer.requestDate : new Date().toISOString(),
    };
  }
}

function isErrorEnvelope(body: unknown): body is { errorWrappers?: { error?: string }[] } {
  return typeof body === "object" && body !== null && (body as { actionSucceed?: unknown }).actionSucceed === false;
}

/**
 * Caches definitive answers (valid/invalid) for `ttlMs`; `unknown` is never cached, so the next
 * call retries. Concurrent checks of the same number share one upstream call.
 */
export class CachedVatRegistry implements VatRegistry {
  private readonly cache: LRUCache<string, RegistrationResult>;
  private readonly inFlight = new Map<string, Promise<RegistrationResult>>();

  constructor(
    private readonly inner: VatRegistry,
    opts: { ttlMs: number; max?: number },
  ) {
    this.cache = new LRUCache({ max: opts.max ?? 10_000, ttl: opts.ttlMs });
  }

  get name(): string {
    return this.inner.name;
  }

  covers(country: string): boolean {
    return this.inner.covers(country);
  }

  async check(country: string, number: string): Promise<RegistrationResult> {
    const key = `${country}:${number}`;
    const hit = this.cache.get(key);
    if (hit) return { ...hit, cached: true };
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const call = this.inner
      .check(country, number)
      .then((result) => {
        if (result.status !== "unknown") this.cache.set(key, result);
        return result;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, call);
    return call;
  }
}

/** VIES behind a one-hour cache when VIES_BASE_URL is set; otherwise no registry (checks say `not_configured`). */
export function createVatRegistry(
  config: { VIES_BASE_URL?: string; UPSTREAM_TIMEOUT_MS: number; UPSTREAM_MAX_BYTES: number },
  metrics: Metrics,
): VatRegistry | undefined {
  if (!config.VIES_BASE_URL) return undefined;
  const vies = new ViesRegistry({
    baseUrl: config.VIES_BASE_URL,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxBytes: config.UPSTREAM_MAX_BYTES,
    metrics,
  });
  return new CachedVatRegistry(vies, { ttlMs: 60 * 60 * 1000 });
}
