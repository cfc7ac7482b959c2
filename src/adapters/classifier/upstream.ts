import { z } from "zod";
import {
  type Classifier,
  type ClassifyResult,
  classification,
  type Label,
  type ModelInfo,
} from "../../ports/classifier.js";
import { readCapped, refusedRedirect } from "../upstream-http.js";

export interface UpstreamClassifierOptions {
  url: string;
  token?: string;
  /** Hard deadline for the whole call (UPSTREAM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest answer body read (UPSTREAM_MAX_BYTES). */
  maxBytes: number;
}

const LabelScore = z.object({ label: z.string(), score: z.number().min(0).max(1) });
const Answer = z.union([z.array(z.array(LabelScore)), z.array(LabelScore)]);

const ALIASES: Record<string, Label> = {
  positive: "positive",
  pos: "positive",
  label_2: "positive",
  neutral: "neutral",
  neu: "neutral",
  label_1: "neutral",
  negative: "negative",
  neg: "negative",
  label_0: "negative",
};

/** POSITIVE / pos / LABEL_2 → positive (the cardiffnlp order: 0 negative, 1 neutral, 2 positive). */
export function normaliseLabel(label: string): Label | undefined {
  return ALIASES[label.trim().toLowerCase()];
}

/** The model's name from a Hugging Face–style URL (`…/models/<org>/<name>`), else the URL's host and path. */
function modelName(url: string): string {
  const u = new URL(url);
  const match = /\/models\/(.+?)\/?$/.exec(u.pathname);
  return match?.[1] ?? `${u.host}${u.pathname.replace(/\/+$/, "")}`;
}

/** Hugging Face–style text classification over HTTP: `POST {"inputs": [...]}` → `[[{label, score}, …], …]`. */
export class UpstreamClassifier implements Classifier {
  readonly model: ModelInfo;

  constructor(private readonly opts: UpstreamClassifierOptions) {
    this.model = { provider: "upstream", name: modelName(opts.url), version: null };
  }

  async classify(texts: readonly string[]): Promise<ClassifyResult> {
    let body: unknown;
    try {
      const res = await fetch(this.opts.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          ...(this.opts.token && { Authorization: `Bearer ${this.opts.token}` }),
        },
        body: JSON.stringify({ inputs: texts }),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        // A redirect is a failure, never followed: the texts (and the token) go nowhere else.
        redirect: "manual",
      });
      if (await refusedRedirect(res)) return { ok: false, detail: `classifier redirected with ${res.status}` };
      const text = await readCapped(res, this.opts.maxBytes);
      if (!res.ok) return { ok: false, detail: `classifier answered ${res.status}` };
      body = JSON.parse(text);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const why =
        e.name === "TimeoutError" ? `no answer within ${this.opts.timeoutMs} ms` : (e.cause?.code ?? e.message);
      return { ok: false, detail: `classifier failed: ${why}` };
    }
    const parsed = Answer.safeParse(body);
    if (!parsed.success) return { ok: false, detail: "classifier answer is malformed" };
    // A single input may come back unnested: [{label, score}, …].
    const rows = texts.length === 1 && parsed.data.every((r) => !Array.isArray(r)) ? [parsed.data] : parsed.data;
    if (rows.length !== texts.length || rows.some((r) => !Array.isArray(r))) {
      return { ok: false, detail: `classifier answered ${rows.length} results for ${texts.length} texts` };
    }
    const results = [];
    for (const row of rows as z.infer<typeof LabelScore>[][]) {
      const scores = { positive: 0, neutral: 0, negative: 0 };
      for (const { label, score } of row) {
        const l = normaliseLabel(label);
        if (l === undefined) return { ok: false, detail: `classifier answered an unknown label "${label}"` };
        scores[l] += score;
      }
      const sum = scores.positive + scores.neutral + scores.negative;
      if (!(sum > 0)) return { ok: false, detail: "classifier answered no scores" };
      results.push(
        classification({
          positive: scores.positive / sum,
          neutral: scores.neutral / sum,
          negative: scores.negative / sum,
        }),
      );
    }
    return { ok: true, results };
  }
}
