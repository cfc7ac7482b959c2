/** The model card's metrics section from the trainer's report: every figure as the trainer measured it. */
import type { Report } from "./train-classifier.js";
import type { Interval, Metrics, PairedDifference } from "./train-metrics.js";

/** The name of the variant that is the model before this one, retrained: "… (x.y.z)". */
export const BEFORE = /\((\d+\.\d+\.\d+)\)$/;

export const METRICS_START = "<!-- metrics: written by npm run train:classifier -->";
export const METRICS_END = "<!-- end of metrics -->";

const pct = (i: Interval) => `${(100 * i.value).toFixed(1)} (${(100 * i.lo).toFixed(1)}–${(100 * i.hi).toFixed(1)})`;
const num = (i: Interval) => `${i.value.toFixed(3)} (${i.lo.toFixed(3)}–${i.hi.toFixed(3)})`;
const delta = (a: Interval, b: Interval) => `${a.value >= b.value ? "+" : ""}${(100 * (a.value - b.value)).toFixed(1)}`;

export const HEAD =
  "| corpus | texts | 3-class acc % | Δ VADER | macro-F1 | binary acc % (texts) | Δ VADER | log-loss | Brier | ECE |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |";

export function row(name: string, m: Metrics, v: Metrics): string {
  return `| ${name} | ${m.n} | ${pct(m.accuracy)} | ${delta(m.accuracy, v.accuracy)} | ${num(m.macroF1)} | ${pct(m.binaryAccuracy)} (${m.binaryN}) | ${delta(m.binaryAccuracy, v.binaryAccuracy)} | ${num(m.logLoss)} | ${num(m.brier)} | ${num(m.ece)} |`;
}

/** One of issue 20's goals on one corpus: the model's figure, the goal's, and whether it is met. */
export interface GoalCheck {
  goal: string;
  /** "model vs goal", as the card shows it. */
  shown: string;
  met: boolean;
  /** By how much it is met or missed, with its unit. */
  by: string;
}

/** Issue 20's four goals for a model's metrics beside VADER's on the same texts. */
export function goalChecks(m: Metrics, v: Metrics): GoalCheck[] {
  const pts = (x: number) => `${Math.abs(100 * x).toFixed(1)} points`;
  const bin = m.binaryAccuracy.value - v.binaryAccuracy.value - 0.05;
  const acc = m.accuracy.value - v.accuracy.value + 0.01;
  const ll = Math.log(3) - m.logLoss.value;
  const ece = 0.05 - m.ece.value;
  return [
    {
      goal: "binary accuracy ≥ VADER + 5 points",
      shown: `${(100 * m.binaryAccuracy.value).toFixed(1)} vs ${(100 * (v.binaryAccuracy.value + 0.05)).toFixed(1)}`,
      met: bin >= 0,
      by: pts(bin),
    },
    {
      goal: "3-class accuracy ≥ VADER − 1 point",
      shown: `${(100 * m.accuracy.value).toFixed(1)} vs ${(100 * (v.accuracy.value - 0.01)).toFixed(1)}`,
      met: acc >= 0,
      by: pts(acc),
    },
    { goal: "log-loss < ln 3 = 1.099", shown: m.logLoss.value.toFixed(3), met: ll > 0, by: Math.abs(ll).toFixed(3) },
    { goal: "ECE ≤ 0.05", shown: m.ece.value.toFixed(3), met: ece >= 0, by: Math.abs(ece).toFixed(3) },
  ];
}

/** Rows of a goals table (`| name | goal | model vs goal | verdict |`) for one corpus. */
export function goalRows(name: string, m: Metrics, v: Metrics): string[] {
  return goalChecks(m, v).map(
    (g) => `| ${name} | ${g.goal} | ${g.shown} | ${g.met ? `met, by ${g.by}` : `**missed** by ${g.by}`} |`,
  );
}

/** Issue 20's goals, left one corpus out, with the margin by which each is met or missed. */
function goals(r: Report): string[] {
  const rows = r.shipped.loco.flatMap((l) => goalRows(l.heldOut, l.model, l.vader));
  return ["| held-out corpus | goal | model vs goal | |", "| --- | --- | --- | --- |", ...rows];
}

/**
 * The model before this one, retrained by the same trainer (the variant whose name ends in
 * "(<its version>)"), beside this model and VADER, left one corpus out.
 */
function beforeAfter(r: Report): string[] {
  const before = r.variants.find((v) => BEFORE.test(v.variant.name));
  if (!before) return [];
  const version = before.variant.name.match(BEFORE)?.[1];
  const cell = (m: Metrics) =>
    `${(100 * m.accuracy.value).toFixed(1)} / ${(100 * m.binaryAccuracy.value).toFixed(1)} / ${m.logLoss.value.toFixed(3)} / ${m.ece.value.toFixed(3)}`;
  return [
    `### ${version} against ${r.model.version}, leave one corpus out`,
    "",
    "3-class accuracy % / binary accuracy % / log-loss / ECE; the earlier model retrained by this trainer.",
    "",
    `| held out | ${version} | ${r.model.version} | VADER |`,
    "| --- | --- | --- | --- |",
    ...r.shipped.loco.map((l) => {
      const b = before.loco.find((x) => x.heldOut === l.heldOut);
      return `| ${l.heldOut} | ${b ? cell(b.model) : "–"} | ${cell(l.model)} | ${cell(l.vader)} |`;
    }),
    "",
    ...paired(r),
  ];
}

/** The same comparison text by text: differences with paired bootstrap intervals. */
function paired(r: Report): string[] {
  const p = r.shipped.paired;
  if (!p) return [];
  const pts = (d: PairedDifference) =>
    `${d.value >= 0 ? "+" : ""}${(100 * d.value).toFixed(2)} (${(100 * d.lo).toFixed(2)} to ${(100 * d.hi).toFixed(2)})`;
  const abs = (d: PairedDifference) =>
    `${d.value >= 0 ? "+" : ""}${d.value.toFixed(4)} (${d.lo.toFixed(4)} to ${d.hi.toFixed(4)})`;
  return [
    `${r.model.version} − ${p.against} text by text (each model trained without the held-out corpus, scored on the same texts; paired percentile bootstrap 95 % intervals, 200 seeded resamples; "right only by" counts the texts one model gets right and the other wrong):`,
    "",
    "| held out | 3-class acc, points | right only by old / new | binary acc, points | right only by old / new | log-loss | ECE |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...p.rows.map(
      ({ heldOut, paired: d }) =>
        `| ${heldOut} | ${pts(d.accuracy)} | ${d.accuracy.onlyA} / ${d.accuracy.onlyB} | ${pts(d.binaryAccuracy)} | ${d.binaryAccuracy.onlyA} / ${d.binaryAccuracy.onlyB} | ${abs(d.logLoss)} | ${abs(d.ece)} |`,
    ),
    "",
  ];
}

/** Input-dependent calibration variants against the shipped model, text by text. */
function inputCalibrationPaired(r: Report): string[] {
  const list = r.inputCalibration;
  if (!list?.length) return [];
  const pts = (d: PairedDifference) =>
    `${d.value >= 0 ? "+" : ""}${(100 * d.value).toFixed(2)} (${(100 * d.lo).toFixed(2)} to ${(100 * d.hi).toFixed(2)})`;
  const abs = (d: PairedDifference) =>
    `${d.value >= 0 ? "+" : ""}${d.value.toFixed(4)} (${d.lo.toFixed(4)} to ${d.hi.toFixed(4)})`;
  return [
    `### Input-dependent calibration against ${r.model.version}, text by text`,
    "",
    `Each variant − ${r.model.version}, both trained and calibrated without the held-out corpus (on training data only), scored on the same texts; paired percentile bootstrap 95 % intervals, 200 seeded resamples. "labels changed": texts whose 3-class argmax differs.`,
    "",
    "| variant | held out | 3-class acc, points | binary acc, points | log-loss | ECE | labels changed |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...list.flatMap((v) =>
      v.rows.map(
        ({ heldOut, paired: d, labelsChanged }) =>
          `| ${v.variant} | ${heldOut} | ${pts(d.accuracy)} | ${pts(d.binaryAccuracy)} | ${abs(d.logLoss)} | ${abs(d.ece)} | ${labelsChanged} of ${d.n} |`,
      ),
    ),
    "",
  ];
}

/** metrics.json: the report without its run time (the rest is reproducible), numbers to 5 decimals. */
export function metricsJson(report: Report): string {
  const round = (_k: string, v: unknown) => (typeof v === "number" ? Number(v.toFixed(5)) : v);
  return `${JSON.stringify({ ...report, trainSeconds: undefined }, round, 1)}\n`;
}

/**
 * The card's metrics section, always rendered from the figures as metrics.json stores them (to 5
 * decimals), so that a fresh run, `--reuse` and `--card-only` write the same card.
 */
export function cardMetrics(report: Report): string {
  return markdownReport(JSON.parse(metricsJson(report)) as Report);
}

export function markdownReport(r: Report): string {
  const out: string[] = [];
  out.push(
    `## Metrics of ${r.model.name} ${r.model.version}`,
    "",
    "Written by `npm run train:classifier` (do not edit by hand). 95 % intervals in brackets:",
    "Wilson for accuracies, percentile bootstrap (200 seeded resamples) for the rest. ECE: the standard",
    "top-label ECE, confidence of the predicted class against its accuracy in 15 equal-width bins,",
    "weighted by the share of texts in each. 3-class truth: rating > 0.5 positive, < −0.5",
    "negative, else neutral; binary at 0 (ratings of 0 left out); GoEmotions as in docs/model-card.md.",
    "",
    `Weights: ${r.model.bytes.toLocaleString("en")} bytes (2^${r.model.bits} buckets × 3 classes, int8).`,
    "",
    "### Goals of issue 20, leave one corpus out",
    "",
    ...goals(r),
    "",
    ...beforeAfter(r),
    "### Leave one corpus out (trained and calibrated on the other two, scored on all of this one)",
    "",
    HEAD,
    ...r.shipped.loco.map((l) => row(l.heldOut, l.model, l.vader)),
    "",
    "VADER as served (`CLASSIFIER_MODEL=vader`) on the same texts:",
    "",
    HEAD,
    ...r.shipped.loco.map((l) => row(l.heldOut, l.vader, l.vader)),
    "",
    "### The shipped model on the held-out test splits (trained on all three train splits)",
    "",
    HEAD,
    ...Object.entries(r.shipped.test).map(([c, t]) => row(c, t.model, t.vader)),
    "",
    "VADER on the same test splits:",
    "",
    HEAD,
    ...Object.entries(r.shipped.test).map(([c, t]) => row(c, t.vader, t.vader)),
    "",
    ...inputCalibrationPaired(r),
    "### Variants compared (leave one corpus out; 3-class / binary accuracy %, log-loss, ECE)",
    "",
    "| variant | tweets | amazon | goemotions |",
    "| --- | --- | --- | --- |",
    ...r.variants.map(
      (v) =>
        `| ${v.variant.name} | ${v.loco
          .map(
            (l) =>
              `${(100 * l.model.accuracy.value).toFixed(1)} / ${(100 * l.model.binaryAccuracy.value).toFixed(1)} / ${l.model.logLoss.value.toFixed(3)} / ${l.model.ece.value.toFixed(3)}`,
          )
          .join(" | ")} |`,
    ),
    "",
    "### Every variant in full, leave one corpus out",
    "",
    "Each held-out corpus scored whole (texts as in the first table), with 95 % intervals; Δ VADER against VADER as served on the same texts.",
    "",
    ...r.variants.flatMap((v) => [
      `#### ${v.variant.name}`,
      "",
      HEAD,
      ...v.loco.map((l) => row(l.heldOut, l.model, l.vader)),
      "",
    ]),
    "### Data (texts with a clear label)",
    "",
    "| corpus | train | calibration | test |",
    "| --- | --- | --- | --- |",
    ...Object.entries(r.data).map(([c, d]) => `| ${c} | ${d.train} | ${d.calibration} | ${d.test} |`),
    "",
  );
  return out.join("\n");
}
