import { describe, expect, it } from "vitest";
import { holding, settle, unlessAborted } from "../../src/features/shared/idempotency.js";
import { idempotencyRefusalError } from "../../src/features/shared/idempotency-answers.js";
import type { IdempotencyRef, IdempotencyStore } from "../../src/ports/idempotency.js";
import { until } from "../helpers/key-stores.js";

/** A store that records what the holder did with its claim. */
function recordingStore(): IdempotencyStore & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    claim: async () => ({ kind: "owned", owner: "o", takeover: false, charged: false }),
    renew: async () => true,
    complete: async (_ref: IdempotencyRef, _owner: string, status: number, body: string) => {
      calls.push(`complete ${status} ${body}`);
    },
    release: async () => {
      calls.push("release");
    },
    lapse: async () => {
      calls.push("lapse");
    },
    markCharged: async (_ref: IdempotencyRef, _owner: string, charged: boolean) => {
      calls.push(`charged ${charged}`);
      return true;
    },
  };
}

const ref = { scope: "test", key: "k" };
const timing = { leaseMs: 60_000, waitMs: 1_000, now: () => new Date() };

describe("shared/idempotency returns a cut request as a value", () => {
  it("unlessAborted: the work's value, or `cut` when the signal aborts first", async () => {
    expect(await unlessAborted(Promise.resolve(1))).toEqual({ ok: true, value: 1 });
    expect(await unlessAborted(Promise.resolve(1), AbortSignal.abort())).toEqual({ ok: false, error: { kind: "cut" } });
    const controller = new AbortController();
    const pending = unlessAborted(new Promise<number>(() => {}), controller.signal);
    controller.abort();
    expect(await pending).toEqual({ ok: false, error: { kind: "cut" } });
    await expect(unlessAborted(Promise.reject(new Error("job failed")), controller.signal)).resolves.toEqual({
      ok: false,
      error: { kind: "cut" },
    });
    await expect(unlessAborted(Promise.reject(new Error("job failed")), new AbortController().signal)).rejects.toThrow(
      "job failed",
    );
  });

  it("holding: a success is stored; a cut request undoes and releases, and says so as a value", async () => {
    const store = recordingStore();
    const done = await holding(store, ref, "o", timing, async () => ({ body: { n: 1 } }));
    expect(done).toEqual({ ok: true, value: { body: { n: 1 } } });
    expect(store.calls).toEqual(['complete 200 {"n":1}']);

    const cutStore = recordingStore();
    let undone = 0;
    const controller = new AbortController();
    const cut = holding(cutStore, ref, "o", timing, () => new Promise(() => controller.abort()), {
      signal: controller.signal,
      undo: [
        async () => {
          undone++;
        },
      ],
      after: "lapse",
    });
    expect(await cut).toEqual({ ok: false, error: { kind: "cut" } });
    expect([undone, cutStore.calls]).toEqual([1, ["lapse"]]);
  });

  it("settle retries what the data tier refused for a minute of its clock, then gives up", async () => {
    let clock = Date.parse("2026-01-01T00:00:00Z");
    let tries = 0;
    const refused = async () => {
      tries++;
      throw new Error("the database is away");
    };
    await settle([refused], () => new Date(clock));
    expect(
      await until(
        async () => tries,
        (n) => n >= 3,
        5000,
      ),
    ).toBeGreaterThanOrEqual(3); // retried in the background
    clock += 61_000; // the minute is over on the injected clock (not on the wall clock)
    const after = tries;
    await new Promise((r) => setTimeout(r, 800));
    expect(tries).toBeLessThanOrEqual(after + 1); // at most the try already under way (one every 200 ms before)
  });

  it("the routes' answers keep their status, code, message and Retry-After", () => {
    const answers = (["mismatch", "in_progress", "cut"] as const).map((kind) => {
      const e = idempotencyRefusalError({ kind });
      return [e.status, e.code, e.message, e.headers];
    });
    expect(answers).toEqual([
      [409, "conflict", "Idempotency-Key was already used with a different request body.", undefined],
      [
        409,
        "conflict",
        "A request with this Idempotency-Key is still in progress; retry shortly.",
        { "Retry-After": "1" },
      ],
      [
        503,
        "unavailable",
        "The request was cut before its answer and nothing was kept; retry it.",
        { "Retry-After": "1" },
      ],
    ]);
  });
});
