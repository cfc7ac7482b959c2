import { randomBytes, randomInt } from "node:crypto";
import { request } from "node:http";
import { Redis } from "ioredis";
import type { CreatedKey } from "../../src/ports/key-store.js";
import { runCli } from "../helpers/cli.js";
import { redisKeyPrefix } from "../helpers/env.js";
import type { ServerProcess } from "../helpers/process.js";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code: string; message: string; reason?: string } } & Record<string, unknown>;
  requestId: string;
}

/**
 * One HTTP request on a fresh connection (no keep-alive, so a cluster's primary hands each one
 * to the next worker) from `localAddress`, which the server sees as the client IP.
 */
export function call(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      { method: opts.method ?? "GET", headers: opts.headers, localAddress: opts.localAddress, agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? JSON.parse(text) : {},
            requestId: String(res.headers["x-request-id"]),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

export const classify = (base: string, key: string) =>
  call(base, "/v1/vibe/classify", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(["what a lovely day"]),
  });

/**
 * A loopback address of this run's own, somewhere in 127.0.0.0/8 (never 127.0.0.1): the demo
 * tier counts per client IP, so runs sharing one Redis never count against each other.
 */
export const uniqueLoopback = (): string => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/** A shared AUTH_SECRET (32+ characters), as every instance behind one load balancer needs. */
export const authSecret = (): string => randomBytes(32).toString("base64url");

/** The demo tier's Redis counter for `ip` (rate-limiter-flexible: `<keyPrefix>:<key>`), as this file's servers name it. */
export async function clearDemoCounter(redisUrl: string, ip: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await redis.del(`${redisKeyPrefix()}rl:demo:${ip}`);
  await redis.quit();
}

/** `almanac keys create …` against the same database as the servers. */
export async function createKey(env: Record<string, string>, ...args: string[]): Promise<CreatedKey> {
  const res = await runCli(["keys", "create", "--name", "scale", "--permission", "vibe.classify", ...args], env);
  if (res.code !== 0) throw new Error(`keys create failed (${res.code}): ${res.stderr}`);
  return JSON.parse(res.stdout) as CreatedKey;
}

/**
 * Why shared counts may come out wrong: decisions an instance took alone because Redis did not
 * answer in time (`rate_limiter_fallback_total`), for failure messages.
 */
export async function redisFallbacks(...bases: string[]): Promise<string> {
  const counts = await Promise.all(
    bases.map(async (base) => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return [...text.matchAll(/^rate_limiter_fallback_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    }),
  );
  return `in-process fallbacks while Redis was slow: ${counts.join(", ")}`;
}

/** Status and error reason of each answer, e.g. "200" or "429 USAGE_EXCEEDED". */
export const verdicts = (answers: Answer[]): string[] =>
  answers.map((a) => (a.status === 200 ? "200" : `${a.status} ${a.body.error?.reason ?? a.body.error?.code}`));

function parseLine(line: string): unknown {
  try {
    return line.startsWith("{") ? JSON.parse(line) : {};
  } catch {
    return {}; // a line still being written
  }
}

/**
 * The pids of the processes that logged these request ids (LOG_LEVEL=info request lines). The
 * log line may reach us after the response, so this waits until every id has shown up.
 */
export async function pidsOf(server: ServerProcess, requestIds: string[], timeoutMs = 5000): Promise<Set<number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const byId = new Map<string, number>();
    for (const line of server.output().split("\n")) {
      const entry = parseLine(line) as { pid?: number; request_id?: string; msg?: string };
      if (entry.msg === "request" && entry.request_id && entry.pid) byId.set(entry.request_id, entry.pid);
    }
    const pids = requestIds.map((id) => byId.get(id));
    if (pids.every((p) => p !== undefined)) return new Set(pids as number[]);
    if (Date.now() > deadline) throw new Error(`no request log line for ${requestIds.filter((id) => !byId.has(id))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until `n` workers have logged that they listen (each answers once it has). */
export async function workersListening(server: ServerProcess, n: number, timeoutMs = 30_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = server
      .output()
      .split("\n")
      .map((l) => parseLine(l) as { pid?: number; msg?: string })
      .filter((e) => e.msg?.startsWith("Almanac listening"))
      .map((e) => e.pid as number);
    if (pids.length >= n) return pids;
    if (Date.now() > deadline || server.proc.exitCode !== null) {
      throw new Error(`only ${pids.length} of ${n} workers started:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
