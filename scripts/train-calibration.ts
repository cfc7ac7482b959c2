/**
 * The trainer's calibration fits (scripts/train-classifier.ts): temperature or vector scaling,
 * Dirichlet calibration, and input-dependent calibration over a few per-text features. Each is a
 * weighted maximum-likelihood fit on logits of held-out training rows; deterministic (no draws).
 */
import { DENSE } from "../src/adapters/classifier/features.js";

/**
 * Per-text calibration features, read from the dense features (DENSE, then VADER_DENSE):
 * "short" (≤ 10 words) and "long" (> 25 words) are indicators, "vader_magnitude" is |VADER's compound|.
 */
export type CalFeature =
  | "length"
  | "short"
  | "long"
  | "lexicon_hits"
  | "no_lexicon_hit"
  | "compound_magnitude"
  | "vader_magnitude"
  | "mixed"
  | "exclamations"
  | "capitals";

const SHORT = Math.log1p(10) / 5;
const LONG = Math.log1p(25) / 5;

export function calFeature(name: CalFeature, d: Float64Array): number {
  const at = (f: (typeof DENSE)[number]) => d[DENSE.indexOf(f)] as number;
  if (name === "short") return at("length") <= SHORT + 1e-12 ? 1 : 0;
  if (name === "long") return at("length") > LONG + 1e-12 ? 1 : 0;
  if (name === "vader_magnitude") {
    if (d.length < DENSE.length + 1) throw new Error("vader_magnitude needs VADER's scores among the dense features");
    return Math.abs(d[DENSE.length] as number);
  }
  return at(name);
}

/**
 * The three calibrated logits in `p` replaced by the log-loss gradient with respect to them,
 * sw · (softmax_c − [c = y]), the weighted residuals both calibration fits descend along.
 */
function residuals(p: number[], y: number, sw: number): void {
  let m = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < 3; c++) m = Math.max(m, p[c] as number);
  let sum = 0;
  for (let c = 0; c < 3; c++) {
    p[c] = Math.exp((p[c] as number) - m);
    sum += p[c] as number;
  }
  for (let c = 0; c < 3; c++) p[c] = sw * ((p[c] as number) / sum - (c === y ? 1 : 0));
}

/**
 * Calibration by weighted maximum likelihood on rows scored by raw logits z:
 * p ∝ exp(g_c · z_c + b_c), neutral's bias fixed at 0; `vector` false ties the gains
 * (temperature scaling, T = 1/g), true lets each class have its own (vector scaling, which on
 * a linear model's logits is diagonal Dirichlet calibration). Convex; plain gradient descent.
 */
export function fitCalibration(
  z: Float64Array,
  labels: ArrayLike<number>,
  weight: ArrayLike<number>,
  vector: boolean,
): { gain: [number, number, number]; bias: [number, number, number] } {
  const n = labels.length;
  const g = [1, 1, 1];
  const b = [0, 0, 0];
  const p = [0, 0, 0];
  for (let it = 0; it < 2000; it++) {
    const gg = [0, 0, 0];
    const gb = [0, 0, 0];
    for (let k = 0; k < n; k++) {
      for (let c = 0; c < 3; c++) p[c] = (z[k * 3 + c] as number) * (g[c] as number) + (b[c] as number);
      residuals(p, labels[k] as number, (weight[k] as number) / n);
      for (let c = 0; c < 3; c++) {
        const r = p[c] as number;
        gg[c] = (gg[c] as number) + r * (z[k * 3 + c] as number);
        gb[c] = (gb[c] as number) + r;
      }
    }
    const tied = ((gg[0] as number) + (gg[1] as number) + (gg[2] as number)) / 3;
    for (let c = 0; c < 3; c++) {
      g[c] = (g[c] as number) - 0.5 * (vector ? (gg[c] as number) : 3 * tied);
      if (c !== 1) b[c] = (b[c] as number) - 0.5 * (gb[c] as number);
    }
  }
  return { gain: g as [number, number, number], bias: b as [number, number, number] };
}

/**
 * Dirichlet calibration on logits: p ∝ exp(M z + b), M a full 3×3 matrix (starting at the
 * identity), neutral's bias fixed at 0; weighted maximum likelihood by plain gradient descent.
 */
export function fitMatrixCalibration(
  z: Float64Array,
  labels: ArrayLike<number>,
  weight: ArrayLike<number>,
): { matrix: number[]; bias: [number, number, number] } {
  const n = labels.length;
  const M = [1, 0, 0, 0, 1, 0, 0, 0, 1];
  const b = [0, 0, 0];
  const p = [0, 0, 0];
  for (let it = 0; it < 2000; it++) {
    const gM = [0, 0, 0, 0, 0, 0, 0, 0, 0];
    const gb = [0, 0, 0];
    for (let k = 0; k < n; k++) {
      const z0 = z[k * 3] as number;
      const z1 = z[k * 3 + 1] as number;
      const z2 = z[k * 3 + 2] as number;
      for (let c = 0; c < 3; c++)
        p[c] =
          (M[c * 3] as number) * z0 + (M[c * 3 + 1] as number) * z1 + (M[c * 3 + 2] as number) * z2 + (b[c] as number);
      residuals(p, labels[k] as number, (weight[k] as number) / n);
      for (let c = 0; c < 3; c++) {
        const r = p[c] as number;
        gM[c * 3] = (gM[c * 3] as number) + r * z0;
        gM[c * 3 + 1] = (gM[c * 3 + 1] as number) + r * z1;
        gM[c * 3 + 2] = (gM[c * 3 + 2] as number) + r * z2;
        gb[c] = (gb[c] as number) + r;
      }
    }
    for (let j = 0; j < 9; j++) M[j] = (M[j] as number) - 0.5 * (gM[j] as number);
    for (const c of [0, 2]) b[c] = (b[c] as number) - 0.5 * (gb[c] as number);
  }
  return { matrix: M, bias: b as [number, number, number] };
}

/**
 * Input-dependent calibration by weighted maximum likelihood: p ∝ exp(g(x) · z + b + [0, n(x), 0]),
 * g(x) = exp(a₀ + Σ a_k φ_k), n(x) = Σ c_k φ_k (when `neutral`), the polar biases b as in
 * fitCalibration; Adam on the mean weighted log-loss (deterministic, no draws).
 */
export function fitInputCalibration(
  z: Float64Array,
  phi: Float64Array,
  k: number,
  labels: ArrayLike<number>,
  weight: ArrayLike<number>,
  neutral: boolean,
  biases = true,
): { a: number[]; c: number[]; bias: [number, number, number] } {
  const n = labels.length;
  // parameters: a[0..k], b+, b−, c[1..k]
  const np = k + 1 + 2 + k;
  const th = new Float64Array(np);
  const m1 = new Float64Array(np);
  const m2 = new Float64Array(np);
  const gr = new Float64Array(np);
  const p = [0, 0, 0];
  const lr = 0.02;
  for (let it = 1; it <= 3000; it++) {
    gr.fill(0);
    for (let r = 0; r < n; r++) {
      let lg = th[0] as number;
      let nb = 0;
      for (let j = 0; j < k; j++) {
        const x = phi[r * k + j] as number;
        lg += (th[j + 1] as number) * x;
        if (neutral) nb += (th[k + 3 + j] as number) * x;
      }
      const g = Math.exp(lg);
      p[0] = (z[r * 3] as number) * g + (th[k + 1] as number);
      p[1] = (z[r * 3 + 1] as number) * g + nb;
      p[2] = (z[r * 3 + 2] as number) * g + (th[k + 2] as number);
      residuals(p, labels[r] as number, (weight[r] as number) / n);
      // d/d lg = Σ_c r_c z_c g
      const dl =
        g *
        ((p[0] as number) * (z[r * 3] as number) +
          (p[1] as number) * (z[r * 3 + 1] as number) +
          (p[2] as number) * (z[r * 3 + 2] as number));
      gr[0] = (gr[0] as number) + dl;
      for (let j = 0; j < k; j++) {
        const x = phi[r * k + j] as number;
        gr[j + 1] = (gr[j + 1] as number) + dl * x;
        if (neutral) gr[k + 3 + j] = (gr[k + 3 + j] as number) + (p[1] as number) * x;
      }
      gr[k + 1] = (gr[k + 1] as number) + (p[0] as number);
      gr[k + 2] = (gr[k + 2] as number) + (p[2] as number);
    }
    for (let j = 0; j < np; j++) {
      if (!biases && (j === k + 1 || j === k + 2)) continue;
      const g = gr[j] as number;
      m1[j] = 0.9 * (m1[j] as number) + 0.1 * g;
      m2[j] = 0.999 * (m2[j] as number) + 0.001 * g * g;
      const mh = (m1[j] as number) / (1 - 0.9 ** it);
      const vh = (m2[j] as number) / (1 - 0.999 ** it);
      th[j] = (th[j] as number) - (lr * mh) / (Math.sqrt(vh) + 1e-8);
    }
  }
  const c = [0, ...Array.from({ length: k }, (_, j) => (neutral ? (th[k + 3 + j] as number) : 0))];
  return {
    a: Array.from(th.subarray(0, k + 1)),
    c,
    bias: [th[k + 1] as number, 0, th[k + 2] as number],
  };
}
