/**
 * The trainer's figures as metrics.json stores them and as the model card shows them (the tables
 * between the card's metrics markers), and the goals of each held-out set.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Corpus } from "./data.js";
import type { Settings } from "./fit.js";
import type { Interval, Metrics } from "./metrics.js";

type Triple = [number, number, number];

/** One training order's model on a held-out corpus: its base seed, figures and calibration. */
export interface OrderRun {
  seed: number;
  model: Metrics;
  gain: Triple;
  bias: Triple;
}

export interface LocoRow {
  heldOut: Corpus;
  /** Training texts dropped as duplicates of a held-out text. */
  dropped: number;
  /** With `orders`: the mean over them of every figure and interval end. */
  model: Metrics;
  vader: Metrics;
  /** With `orders`: their mean. */
  gain: Triple;
  bias: Triple;
  /** Each training order's run (`--orders`), when there were several. */
  orders?: OrderRun[];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const meanTriple = (ts: readonly Triple[]) => [0, 1, 2].map((c) => mean(ts.map((t) => t[c] as number))) as Triple;

/** A held-out fold's row from its orders' runs: the one run, or their mean with the runs kept. */
export function overOrders(heldOut: Corpus, dropped: number, vader: Metrics, runs: readonly OrderRun[]): LocoRow {
  const first = runs[0] as OrderRun;
  if (runs.length === 1) return { heldOut, dropped, model: first.model, vader, gain: first.gain, bias: first.bias };
  const model = Object.fromEntries(
    Object.entries(first.model).map(([k, v]) => {
      const all = runs.map((r) => r.model[k as keyof Metrics]);
      if (typeof v === "number") return [k, v];
      const is = all as Interval[];
      return [k, { value: mean(is.map((i) => i.value)), lo: mean(is.map((i) => i.lo)), hi: mean(is.map((i) => i.hi)) }];
    }),
  ) as unknown as Metrics;
  const gain = meanTriple(runs.map((r) => r.gain));
  const bias = meanTriple(runs.map((r) => r.bias));
  return { heldOut, dropped, model, vader, gain, bias, orders: [...runs] };
}

/** The figures a row's orders spread over, by name: [min, max]. */
function spread(row: LocoRow, pick: (m: Metrics) => Interval): [number, number] | undefined {
  if (!row.orders) return undefined;
  const xs = row.orders.map((o) => pick(o.model).value);
  return [Math.min(...xs), Math.max(...xs)];
}

export interface EmotionReport {
  labels: string[];
  thresholds: number[];
  /** Per emotion on GoEmotions test: F1 at its threshold, and how many test texts carry it. */
  f1: number[];
  support: number[];
  macroF1: number;
  bits: number;
  bytes: number;
}

export interface Report {
  model: { name: string; version: string; bits: number; bytes: number; settings: Settings };
  data: Record<Corpus, { train: number; test: number }>;
  droppedDuplicates: number;
  loco: LocoRow[];
  test: Record<Corpus, { model: Metrics; vader: Metrics }>;
  emotions?: EmotionReport;
}

export const METRICS_START = "<!-- metrics:start (written by npm run train:classifier) -->";
export const METRICS_END = "<!-- metrics:end -->";

export const CORPUS_NAMES: Record<Corpus, string> = {
  tweets: "VADER tweets",
  amazon: "VADER Amazon snippets",
  goemotions: "GoEmotions (Reddit)",
  fintweets: "Finance tweets",
  newsmtsc: "NewsMTSC (political news)",
  xed: "XED (film dialogue)",
};

const pct = (x: number) => (100 * x).toFixed(1);
const ci = (i: Interval) => `${pct(i.value)} (${pct(i.lo)}–${pct(i.hi)})`;
const num = (i: Interval) => `${i.value.toFixed(3)} (${i.lo.toFixed(3)}–${i.hi.toFixed(3)})`;

/**
 * Which goals a row meets: binary ≥ VADER + 5 (plain and balanced), 3-class ≥ VADER − 2,
 * log-loss < ln 3, ECE ≤ 0.10.
 */
export function goals(row: Pick<LocoRow, "model" | "vader">) {
  const m = row.model;
  const v = row.vader;
  return {
    binary: m.binaryAccuracy.value >= v.binaryAccuracy.value + 0.05,
    balancedBinary: m.balancedBinary.value >= v.balancedBinary.value + 0.05,
    threeClass: m.accuracy.value >= v.accuracy.value - 0.02,
    logLoss: m.logLoss.value < Math.log(3),
    ece: m.ece.value <= 0.1,
  };
}

/** The console's line of a row over orders: each figure's mean [min–max]. */
export function printSpread(row: LocoRow, what = `mean of ${row.orders?.length ?? 1} orders`) {
  const f = (pick: (m: Metrics) => Interval, fmt: (x: number) => string) => {
    const r = spread(row, pick);
    return `${fmt(pick(row.model).value)}${r ? ` [${fmt(r[0])}–${fmt(r[1])}]` : ""} vs ${fmt(pick(row.vader).value)}`;
  };
  const dec = (x: number) => x.toFixed(3);
  console.log(
    `${row.heldOut.padEnd(11)} ${what}: 3-class ${f((m) => m.accuracy, pct)}  binary ${f((m) => m.binaryAccuracy, pct)}  ` +
      `balanced ${f((m) => m.balancedBinary, pct)}  log-loss ${f((m) => m.logLoss, dec)}  ECE ${f((m) => m.ece, dec)}  ` +
      `gain ${row.gain.map(dec).join("/")} bias ${row.bias.map(dec).join("/")}`,
  );
}

/** The console's table. */
export function printTable(rows: readonly Pick<LocoRow, "heldOut" | "model" | "vader">[]) {
  for (const r of rows) {
    const g = goals(r);
    console.log(
      `${r.heldOut.padEnd(11)} n=${String(r.model.n).padStart(5)}  3-class ${pct(r.model.accuracy.value)} vs ${pct(
        r.vader.accuracy.value,
      )}  binary ${pct(r.model.binaryAccuracy.value)} vs ${pct(r.vader.binaryAccuracy.value)}${g.binary ? " +5✓" : ""}  ` +
        `balanced ${pct(r.model.balancedBinary.value)} vs ${pct(r.vader.balancedBinary.value)}  ` +
        `log-loss ${r.model.logLoss.value.toFixed(3)} vs ${r.vader.logLoss.value.toFixed(3)}  ECE ${r.model.ece.value.toFixed(
          3,
        )} vs ${r.vader.ece.value.toFixed(3)}`,
    );
  }
}

const tableHead = [
  "| set | n | model 3-class | VADER 3-class | model binary | VADER binary | model balanced binary | VADER balanced binary | model log-loss | VADER log-loss | model ECE | VADER ECE |",
  "| --- | ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];

/** A row of the table; with `row.orders`, each model figure also gets the orders' range in brackets. */
function tableRow(name: string, m: Metrics, v: Metrics, row?: LocoRow): string {
  const cell = (pick: (m: Metrics) => Interval, fmt: (i: Interval) => string, f: (x: number) => string) => {
    const r = row && spread(row, pick);
    return `${fmt(pick(m))}${r ? ` [${f(r[0])}–${f(r[1])}]` : ""}`;
  };
  const dec = (x: number) => x.toFixed(3);
  return `| ${name} | ${m.n} | ${cell((x) => x.accuracy, ci, pct)} | ${ci(v.accuracy)} | ${cell((x) => x.binaryAccuracy, ci, pct)} | ${ci(
    v.binaryAccuracy,
  )} | ${cell((x) => x.balancedBinary, ci, pct)} | ${ci(v.balancedBinary)} | ${cell((x) => x.logLoss, num, dec)} | ${num(
    v.logLoss,
  )} | ${cell((x) => x.ece, num, dec)} | ${num(v.ece)} |`;
}

/** The card's metrics section: the leave-one-out table, the shipped model's test splits, emotions. */
export function cardMetrics(report: Report): string {
  const lines: string[] = [];
  const orders = report.loco[0]?.orders;
  lines.push(
    orders
      ? `Left one corpus out (the model never saw the set's domain; accuracy in %): each model figure is the mean over ${orders.length} training orders (base seeds ${orders.map((o) => o.seed).join(", ")}), with the mean of their 95 % intervals in parentheses and their range in brackets:`
      : "Left one corpus out (the model never saw the set's domain; accuracy in %, 95 % intervals):",
    "",
  );
  lines.push(...tableHead);
  for (const r of report.loco) lines.push(tableRow(CORPUS_NAMES[r.heldOut], r.model, r.vader, r));
  lines.push(
    "",
    `Goals met left one corpus out${orders ? " by the mean over the orders" : ""} (binary and balanced binary ≥ VADER + 5, 3-class ≥ VADER − 2, log-loss < ln 3, ECE ≤ 0.10):`,
    "",
  );
  for (const r of report.loco) {
    const g = goals(r);
    const mark = (ok: boolean) => (ok ? "yes" : "**no**");
    lines.push(
      `- ${CORPUS_NAMES[r.heldOut]}: binary +5 ${mark(g.binary)}, balanced binary +5 ${mark(g.balancedBinary)}, 3-class ≥ −2 ${mark(g.threeClass)}, log-loss ${mark(
        g.logLoss,
      )}, ECE ${mark(g.ece)}`,
    );
  }
  lines.push(
    "",
    "The shipped model on each corpus's test split (the CI check's slice; VADER's two sets are in-sample for VADER):",
    "",
  );
  lines.push(...tableHead);
  for (const [c, t] of Object.entries(report.test)) lines.push(tableRow(CORPUS_NAMES[c as Corpus], t.model, t.vader));
  const e = report.emotions;
  if (e) {
    lines.push("", `Emotions on GoEmotions test: macro-F1 ${e.macroF1.toFixed(3)} over the 27 emotions.`, "");
    lines.push("| emotion | threshold | F1 | test texts |", "| --- | ---: | ---: | ---: |");
    for (const [i, l] of e.labels.entries())
      lines.push(
        `| ${l} | ${(e.thresholds[i] as number).toFixed(2)} | ${(e.f1[i] as number).toFixed(3)} | ${e.support[i]} |`,
      );
  }
  return `${lines.join("\n")}\n`;
}

/** Rewrites the part of the card between its metrics markers. */
export function writeCard(path: string, report: Report) {
  const card = readFileSync(path, "utf8");
  const start = card.indexOf(METRICS_START);
  const end = card.indexOf(METRICS_END);
  if (start < 0 || end < start) throw new Error(`${path} has no metrics markers`);
  writeFileSync(path, `${card.slice(0, start + METRICS_START.length)}\n${cardMetrics(report)}${card.slice(end)}`);
}
