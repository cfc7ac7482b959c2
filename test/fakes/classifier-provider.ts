import { PostFake, type RecordedCall } from "./post-fake.js";

type Style = "upper" | "cardiff" | "short";

const NAMES: Record<Style, [string, string, string]> = {
  upper: ["POSITIVE", "NEUTRAL", "NEGATIVE"],
  cardiff: ["LABEL_2", "LABEL_1", "LABEL_0"],
  short: ["pos", "neu", "neg"],
};

/**
 * A Hugging Face–style text-classification endpoint (`POST {"inputs": [...]}` → one
 * `[{label, score}, …]` per input, best first) as a real HTTP server. Texts containing "good"
 * score positive, "bad" negative, anything else neutral. Extra faults: `wrongLength` (one result
 * too few), `unknownLabel`, and `status` (any non-2xx answer with an HF error body).
 */
export class FakeClassifierProvider extends PostFake {
  style: Style = "upper";
  wrongLength = false;
  unknownLabel = false;
  status: number | null = null;

  protected malformed(): unknown {
    return { error: null, outputs: "positive" };
  }

  protected handle(call: RecordedCall): { status: number; body: unknown } {
    if (this.status !== null) return { status: this.status, body: { error: "Model is currently loading" } };
    const inputs = (call.body as { inputs?: unknown } | undefined)?.inputs;
    if (!Array.isArray(inputs)) return { status: 400, body: { error: "inputs must be a list" } };
    const [pos, neu, neg] = NAMES[this.style];
    const rows = inputs.map((text: string) => {
      const scores = text.includes("good")
        ? [0.9, 0.07, 0.03]
        : text.includes("bad")
          ? [0.05, 0.15, 0.8]
          : [0.2, 0.6, 0.2];
      const row = [
        { label: this.unknownLabel ? "SARCASM" : pos, score: scores[0] as number },
        { label: neu, score: scores[1] as number },
        { label: neg, score: scores[2] as number },
      ];
      return row.sort((a, b) => b.score - a.score);
    });
    return { status: 200, body: this.wrongLength ? rows.slice(1) : rows };
  }
}
