import { AlmanacError, isAlmanacError } from "./errors.js";
import type { components } from "./generated/openapi.js";
import type { AlmanacClient, CallOptions } from "./index.js";
import { wait } from "./transport.js";
import { randomUuid } from "./uuid.js";

type ClassifyResponse = components["schemas"]["ClassifyResponse"];

/** The API's most texts per call. */
const CHUNK = 20;

export interface ClassifyAllProgress {
  /** Texts classified so far. */
  done: number;
  total: number;
}

export interface ClassifyAllOptions extends Pick<CallOptions, "timeoutMs" | "signal"> {
  /** Calls under way at once (default 2). */
  concurrency?: number;
  /** Called after each chunk of 20 comes back. */
  onProgress?: (progress: ClassifyAllProgress) => void;
  /** A 429 or 503 whose `Retry-After` is longer than this (ms) is thrown, not waited for (default 15 minutes). */
  maxWaitMs?: number;
  /** Sent with every chunk as classify's `include` query parameter (e.g. `emotions,sentences`). */
  include?: string;
}

/** Every text's result, in input order (`index` is the position in `texts`). */
export interface ClassifyAllResult {
  model: ClassifyResponse["model"];
  labels: ClassifyResponse["labels"];
  results: ClassifyResponse["results"];
  usage: { texts: number };
}

/**
 * The RateLimit the answers report, shared by the workers: a call starts only while the calls
 * left in the window exceed those under way, else it waits for the window to reset.
 */
class Budget {
  private remaining: number | null = null;
  private resetAt = 0;
  private inFlight = 0;
  private changed: (() => void)[] = [];

  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.remaining === null ? this.inFlight === 0 : this.remaining > this.inFlight) break;
      if (this.remaining !== null && Date.now() >= this.resetAt) {
        this.remaining = null; // a new window: learn it again from the next answer
        continue;
      }
      const untilReset = this.remaining === null ? undefined : this.resetAt - Date.now();
      await Promise.race([
        new Promise<void>((resolve) => this.changed.push(resolve)),
        ...(untilReset === undefined ? [] : [wait(untilReset, signal)]),
        ...(signal ? [wait(2 ** 31 - 1, signal)] : []),
      ]);
    }
    this.inFlight++;
  }

  settle(rate: { remaining: number; resetSeconds: number } | null): void {
    this.inFlight--;
    if (rate) {
      this.remaining = rate.remaining;
      this.resetAt = Date.now() + rate.resetSeconds * 1000;
    } else if (this.remaining === null) {
      this.remaining = Number.POSITIVE_INFINITY; // no RateLimit reported: nothing to stay inside
    }
    for (const wake of this.changed.splice(0)) wake();
  }
}

export async function classifyAll(
  client: AlmanacClient,
  texts: readonly string[],
  options: ClassifyAllOptions = {},
): Promise<ClassifyAllResult> {
  const { concurrency = 2, onProgress, signal, timeoutMs, maxWaitMs = 15 * 60_000, include } = options;
  const chunks: { start: number; texts: string[]; key: string }[] = [];
  for (let start = 0; start < texts.length; start += CHUNK) {
    chunks.push({ start, texts: texts.slice(start, start + CHUNK), key: "" });
  }
  const answers: (ClassifyResponse | undefined)[] = new Array(chunks.length);
  const budget = new Budget();
  let next = 0;
  let done = 0;
  let failed = false;

  const runChunk = async (i: number) => {
    const chunk = chunks[i] as (typeof chunks)[number];
    chunk.key ||= randomUuid();
    for (;;) {
      await budget.take(signal);
      try {
        const answer = await client.post("/v1/vibe/classify", {
          body: { texts: chunk.texts },
          params: {
            header: { "idempotency-key": chunk.key },
            ...(include !== undefined ? { query: { include } } : {}),
          },
          ...(signal ? { signal } : {}),
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          maxRetryDelayMs: 0, // 429s and 503s are waited out here, under the budget
        });
        budget.settle(answer.rateLimit);
        answers[i] = answer.data;
        return;
      } catch (e) {
        budget.settle(e instanceof AlmanacError ? e.rateLimit : null);
        // 429 and 503, and a 409 saying this chunk's first call is still running: wait and send it again.
        const retryable = isAlmanacError(e) && [409, 429, 503].includes(e.status);
        if (!retryable || e.retryAfter === null || e.retryAfter * 1000 > maxWaitMs || failed) throw e;
        await wait(e.retryAfter * 1000, signal);
      }
    }
  };

  const worker = async () => {
    while (!failed && next < chunks.length) {
      const i = next++;
      try {
        await runChunk(i);
      } catch (e) {
        failed = true;
        throw e;
      }
      done += chunks[i]?.texts.length ?? 0;
      onProgress?.({ done, total: texts.length });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, chunks.length)) }, worker));

  const first = answers[0];
  return {
    model: first?.model ?? { provider: "", name: "", version: null },
    labels: first?.labels ?? [],
    results: answers.flatMap((a, i) =>
      (a?.results ?? []).map((r) => ({ ...r, index: (chunks[i]?.start ?? 0) + r.index })),
    ),
    usage: { texts: answers.reduce((n, a) => n + (a?.usage.texts ?? 0), 0) },
  };
}
