import { randomInt, randomUUID } from "node:crypto";
import { request } from "node:http";
import pg from "pg";
import type { ParsedMessage } from "../../support/smtp-server.js";

/**
 * Mixed load over several instances, as a fleet's clients send it during a failover: keyed
 * classify calls with an `Idempotency-Key`, public lookups, contact messages with an
 * `Idempotency-Key`, and sign-in code requests. Operations start at `rate` a second (keyed
 * classify, lookups, contact, sign-in in a fixed 5:3:1:1 rotation, or the test's own `rotation`); each attempt goes to the
 * next instance, as a round-robin balancer sends it.
 *
 * Keyed classify calls and contact messages are retried as a careful client does: after a 503,
 * a connection error or a 409 with `Retry-After` (waiting what it says, at most 2 s; 250 ms
 * after a connection error), with the same `Idempotency-Key` and body, until an answer that is
 * neither, or `retryForMs` after the first try. A contact message's retries come from the same
 * client address (its key is scoped to the client). Lookups and sign-in requests are sent once.
 *
 * Every answer is recorded with its status, its `Retry-After` and when it came, so a test can
 * read the error window (first to last answer outside 2xx/4xx, connection errors included), the
 * answers by status, what each keyed operation ended with, and — with `chargesPerKey` and
 * `mailsPerMessage` — what each one cost and sent.
 */

export type OpKind = "classify" | "lookup" | "contact" | "signin";

/** One try of an operation: the status, or `error` (no HTTP answer: refused, reset, timed out). */
export interface Attempt {
  status: number | "error";
  /** Milliseconds since the load started, when the answer (or the error) came. */
  at: number;
  /** Milliseconds since the load started, when the attempt was sent. */
  sentAt: number;
  instance: number;
  retryAfter?: string;
  /** The error body's `error.code`, or the socket error's message. */
  code?: string;
}

/** An API key the load spends: one per keyed classify operation, so each one's charge is exact. */
export interface LoadKey {
  id: string;
  key: string;
}

export interface Operation {
  kind: OpKind;
  id: number;
  /** Milliseconds since the load started. */
  startedAt: number;
  attempts: Attempt[];
  /** The last answer's status once the operation is over (a retried one: its first answer that is not retried). */
  final?: number | "error";
  idempotencyKey?: string;
  apiKey?: LoadKey;
  /** A contact message's unique text, to find its mails. */
  token?: string;
}

export interface MixedLoadOptions {
  /** Base URLs of the instances (or of one balancer). */
  instances: string[];
  /** Operations started per second (default 100). */
  rate?: number;
  /** Keys for keyed classify calls, one each; when they run out, classify turns are skipped. */
  keys: LoadKey[];
  /** How long a retried operation keeps retrying (default 60 s). */
  retryForMs?: number;
  /** The longest one attempt waits for its answer (default 15 s). */
  attemptTimeoutMs?: number;
  /** Sent as `Origin` with sign-in requests (the instances' PUBLIC_URL). */
  publicUrl: string;
  /** The kinds in turn (default: five keyed classify calls, three lookups, one contact message and one sign-in request in ten). */
  rotation?: OpKind[];
}

export interface MixedLoadReport {
  durationMs: number;
  operations: Operation[];
  /** Every answer by status ("200", "503", "error", …). */
  byStatus: Record<string, number>;
  /** Per kind, every answer by status. */
  byKind: Record<OpKind, Record<string, number>>;
  /** First to last answer outside 2xx/4xx (5xx and connection errors), ms since the start; null when none. */
  errorWindow: { from: number; to: number; ms: number } | null;
  /** Answers that are none of 2xx, 4xx, 503 with Retry-After, or a connection error (e.g. a 500, a 503 without Retry-After). */
  violations: string[];
  /** Retried operations that never got an answer other than 503, 409-with-Retry-After or an error. */
  unfinished: Operation[];
  /** Events the test marked (`mark`), ms since the start. */
  marks: Record<string, number>;
}

/** Ten turns: five keyed classify calls, three lookups, one contact message, one sign-in request. */
const ROTATION: OpKind[] = [
  "classify",
  "lookup",
  "classify",
  "signin",
  "classify",
  "lookup",
  "classify",
  "contact",
  "classify",
  "lookup",
];
const LOOKUPS = ["/v1/moon?date=2024-01-25", "/v1/vat?code=DE", "/v1/holidays?country=GB&year=2024"];
const MAX_WAIT_MS = 2000;
const ERROR_WAIT_MS = 250;

/** A loopback address of its own (127.0.0.0/8, never 127.0.0.1): per-client limits never meet. */
const loopback = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

interface Sent {
  status: number | "error";
  retryAfter?: string;
  code?: string;
}

function send(
  url: string,
  opts: { method: string; headers?: Record<string, string>; body?: string; localAddress: string; timeoutMs: number },
): Promise<Sent> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: opts.method, headers: opts.headers, localAddress: opts.localAddress, agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
          } catch {
            // not JSON (a proxy's page): the status says enough
          }
          const retryAfter = res.headers["retry-after"];
          resolve({ status: res.statusCode ?? 0, retryAfter: retryAfter ? String(retryAfter) : undefined, code });
        });
        res.on("error", (err) => resolve({ status: "error", code: err.message }));
      },
    );
    req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on("error", (err) => resolve({ status: "error", code: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(opts.body);
  });
}

/** Whether a careful client retries after this answer: a 503, a connection error, a 409 with Retry-After. */
const retried = (a: Sent) =>
  a.status === "error" || a.status === 503 || (a.status === 409 && a.retryAfter !== undefined);

export class MixedLoad {
  private readonly rate: number;
  private readonly retryForMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly operations: Operation[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly marks: Record<string, number> = {};
  private t0 = 0;
  private timer?: NodeJS.Timeout;
  private turn = 0;
  private nextKey = 0;

  constructor(private readonly opts: MixedLoadOptions) {
    this.rate = opts.rate ?? 100;
    this.retryForMs = opts.retryForMs ?? 60_000;
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 15_000;
  }

  private now(): number {
    return performance.now() - this.t0;
  }

  /** Starts the load: operations begin at `rate` a second until `stop`. */
  start(): this {
    this.t0 = performance.now();
    let begun = 0;
    this.timer = setInterval(() => {
      const due = Math.floor((this.now() * this.rate) / 1000);
      const rotation = this.opts.rotation ?? ROTATION;
      for (; begun < due; begun++) this.begin(rotation[begun % rotation.length] as OpKind);
    }, 10);
    return this;
  }

  /** Records when something happened (e.g. "primary stopped"), in the report's `marks`. */
  mark(name: string): void {
    this.marks[name] = Math.round(this.now());
  }

  /** Answers so far by status (for a test waiting for the load to reach a state). */
  answers(): Attempt[] {
    return this.operations.flatMap((o) => o.attempts);
  }

  private begin(kind: OpKind): void {
    const op: Operation = { kind, id: this.operations.length, startedAt: this.now(), attempts: [] };
    if (kind === "classify") {
      const key = this.opts.keys[this.nextKey++];
      if (!key) return;
      op.apiKey = key;
      op.idempotencyKey = randomUUID();
    }
    if (kind === "contact") {
      op.idempotencyKey = randomUUID();
      op.token = `mixed-load-${randomUUID()}`;
    }
    this.operations.push(op);
    const run = this.run(op).finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private async run(op: Operation): Promise<void> {
    const ip = loopback();
    const json = { "Content-Type": "application/json" };
    let call: { path: string; method: string; headers?: Record<string, string>; body?: string };
    switch (op.kind) {
      case "classify":
        call = {
          path: "/v1/vibe/classify",
          method: "POST",
          headers: {
            ...json,
            Authorization: `Bearer ${op.apiKey?.key}`,
            "Idempotency-Key": op.idempotencyKey as string,
          },
          body: JSON.stringify([`a calm and pleasant day, number ${op.id}`]),
        };
        break;
      case "contact":
        call = {
          path: "/v1/mail/contact",
          method: "POST",
          headers: { ...json, "Idempotency-Key": op.idempotencyKey as string },
          body: JSON.stringify({
            name: "Load Test",
            email: "load@example.test",
            subject: `Load ${op.id}`,
            message: `Message ${op.token}`,
          }),
        };
        break;
      case "signin":
        call = {
          path: "/api/auth/email-otp/send-verification-otp",
          method: "POST",
          headers: { ...json, Origin: this.opts.publicUrl },
          body: JSON.stringify({ email: `load-${op.id}-${randomUUID().slice(0, 8)}@example.test`, type: "sign-in" }),
        };
        break;
      default:
        call = { path: LOOKUPS[op.id % LOOKUPS.length] as string, method: "GET" };
    }
    const retrying = op.kind === "classify" || op.kind === "contact";
    const until = op.startedAt + this.retryForMs;
    for (;;) {
      const instance = this.turn++ % this.opts.instances.length;
      const sentAt = this.now();
      const answer = await send(new URL(call.path, this.opts.instances[instance]).toString(), {
        ...call,
        localAddress: ip,
        timeoutMs: this.attemptTimeoutMs,
      });
      op.attempts.push({ ...answer, at: this.now(), sentAt, instance });
      if (!retrying || !retried(answer)) {
        op.final = answer.status;
        return;
      }
      const wait =
        answer.status === "error" ? ERROR_WAIT_MS : Math.min(MAX_WAIT_MS, 1000 * Number(answer.retryAfter ?? 1));
      if (this.now() + wait > until) return;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /** Stops starting operations, waits for those under way (retries included), and reports. */
  async stop(): Promise<MixedLoadReport> {
    clearInterval(this.timer);
    const durationMs = Math.round(this.now());
    while (this.running.size > 0) await Promise.all([...this.running]);
    return report(this.operations, durationMs, { ...this.marks });
  }
}

function report(operations: Operation[], durationMs: number, marks: Record<string, number>): MixedLoadReport {
  const byStatus: Record<string, number> = {};
  const byKind = Object.fromEntries(ROTATION.map((k) => [k, {}])) as Record<OpKind, Record<string, number>>;
  const violations: string[] = [];
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const op of operations) {
    for (const a of op.attempts) {
      const s = String(a.status);
      byStatus[s] = (byStatus[s] ?? 0) + 1;
      byKind[op.kind][s] = (byKind[op.kind][s] ?? 0) + 1;
      const bad = a.status === "error" || a.status >= 500;
      if (bad) {
        from = Math.min(from, a.at);
        to = Math.max(to, a.at);
      }
      if (a.status !== "error" && a.status >= 500 && !(a.status === 503 && a.retryAfter !== undefined)) {
        violations.push(`${op.kind} #${op.id}: ${a.status} ${a.code ?? ""}${a.retryAfter ? "" : " (no Retry-After)"}`);
      }
    }
  }
  const unfinished = operations.filter((o) => (o.kind === "classify" || o.kind === "contact") && o.final === undefined);
  return {
    durationMs,
    operations,
    byStatus,
    byKind,
    errorWindow: from <= to ? { from: Math.round(from), to: Math.round(to), ms: Math.round(to - from) } : null,
    violations,
    unfinished,
    marks,
  };
}

/**
 * What each keyed classify operation was charged: its key's uses at creation (`initialUses`)
 * less what the database now holds. Read through `databaseUrl` once the load is over.
 */
export async function chargesPerKey(
  databaseUrl: string,
  operations: Operation[],
  initialUses: number,
): Promise<Map<Operation, number>> {
  const keyed = operations.filter((o) => o.kind === "classify" && o.apiKey);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; remaining: number }>(
      "select id, remaining from api_keys where id = any($1)",
      [keyed.map((o) => o.apiKey?.id)],
    );
    const left = new Map(rows.map((r) => [r.id, Number(r.remaining)]));
    return new Map(keyed.map((o) => [o, initialUses - (left.get(o.apiKey?.id as string) ?? Number.NaN)]));
  } finally {
    await client.end();
  }
}

/** How many mails the desk received for each contact operation (by its unique text). */
export function mailsPerMessage(messages: ParsedMessage[], operations: Operation[]): Map<Operation, number> {
  const counts = new Map<string, number>();
  for (const m of messages) {
    const token = /mixed-load-[0-9a-f-]{36}/.exec(m.text)?.[0];
    if (token) counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return new Map(operations.filter((o) => o.kind === "contact").map((o) => [o, counts.get(o.token as string) ?? 0]));
}

/**
 * The figures: per retried kind, how its operations ended and what they cost or sent. `charged`
 * and `mailed` count operations by their number of charges and mails (e.g. `{ "1": 180 }`).
 */
export function summarise(
  r: MixedLoadReport,
  charges: Map<Operation, number>,
  mails: Map<Operation, number>,
): {
  errorWindowMs: number;
  byStatus: Record<string, number>;
  classify: { operations: number; ok: number; charged: Record<string, number>; slowestMs: number };
  contact: { operations: number; ok: number; mailed: Record<string, number>; slowestMs: number };
} {
  const tally = (m: Map<Operation, number>) => {
    const out: Record<string, number> = {};
    for (const n of m.values()) out[String(n)] = (out[String(n)] ?? 0) + 1;
    return out;
  };
  const of = (kind: OpKind) => {
    const ops = r.operations.filter((o) => o.kind === kind);
    const done = ops.filter((o) => o.final === 200);
    const slowest = Math.max(0, ...done.map((o) => (o.attempts.at(-1)?.at ?? 0) - o.startedAt));
    return { operations: ops.length, ok: done.length, slowestMs: Math.round(slowest) };
  };
  return {
    errorWindowMs: r.errorWindow?.ms ?? 0,
    byStatus: r.byStatus,
    classify: { ...of("classify"), charged: tally(charges) },
    contact: { ...of("contact"), mailed: tally(mails) },
  };
}

/** Answers by status in consecutive slices of `sliceMs` (by when each came): how the error window looked. */
export function timeline(r: MixedLoadReport, sliceMs = 2000): string[] {
  const slices: Record<string, number>[] = [];
  for (const op of r.operations) {
    for (const a of op.attempts) {
      const i = Math.floor(a.at / sliceMs);
      const slice = slices[i] ?? {};
      slices[i] = slice;
      const s = a.status === "error" ? `${op.kind === "lookup" ? "lookup " : ""}error` : String(a.status);
      slice[s] = (slice[s] ?? 0) + 1;
    }
  }
  return Array.from(slices, (s, i) => `${(i * sliceMs) / 1000}s ${JSON.stringify(s ?? {})}`);
}
