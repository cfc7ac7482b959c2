/** A key's charged calls per UTC day, oldest first, from `from` (YYYY-MM-DD). */
export interface DailyUsage {
  from: string;
  counts: number[];
}

const BAR = 4;
const GAP = 1;
const HEIGHT = 40;

const dayAfter = (from: string, n: number) =>
  new Date(Date.parse(`${from}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Calls per day over 30 days as server-rendered SVG (no script): one bar a day, today on the
 * right, scaled to the busiest day. Its title says in words what it shows, for screen readers and
 * as a tooltip; each bar's own title names its day and count.
 */
export function UsageChart({ usage, id }: { usage: DailyUsage; id: string }) {
  const { from, counts } = usage;
  const max = Math.max(...counts, 0);
  const total = counts.reduce((a, b) => a + b, 0);
  const busiest = counts.indexOf(max);
  const last = dayAfter(from, counts.length - 1);
  const summary =
    total === 0
      ? `No calls per day from ${from} to ${last}.`
      : `Calls per day from ${from} to ${last}: ${total} in all, at most ${max} on ${dayAfter(from, busiest)}.`;
  const width = counts.length * (BAR + GAP);
  return (
    <svg
      class="chart"
      role="img"
      aria-labelledby={`chart-${id}`}
      width={width}
      height={HEIGHT + 1}
      viewBox={`0 0 ${width} ${HEIGHT + 1}`}
    >
      <title id={`chart-${id}`}>{summary}</title>
      <line x1="0" y1={HEIGHT + 0.5} x2={width} y2={HEIGHT + 0.5} />
      {counts.map((n, i) => {
        const h = max === 0 ? 0 : Math.max(n > 0 ? 1 : 0, Math.round((n / max) * HEIGHT));
        return (
          <rect x={i * (BAR + GAP)} y={HEIGHT - h} width={BAR} height={h}>
            <title>{`${dayAfter(from, i)}: ${n}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}
