/** A key's calls per UTC day, oldest first, from `from` (YYYY-MM-DD): allowed and refused. */
export interface DailyUsage {
  from: string;
  counts: number[];
  refused: number[];
}

const BAR = 6;
const GAP = 2;
const HEIGHT = 60;

/** `2026-11-28` → `28 Nov`: the axis's first and last day, in words a reader takes in at a glance. */
const shortDay = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

const dayAfter = (from: string, n: number) =>
  new Date(Date.parse(`${from}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * Calls per day over 30 days as server-rendered SVG (no script): one bar a day, today on the
 * right, scaled to the busiest day; allowed calls from the base line, refused ones stacked above
 * them in the danger colour (class `refused`). Its title says in words what it shows, for screen
 * readers and as a tooltip; each day's own title names its counts. Below it, its first and last
 * day; a legend in text follows.
 */
export function UsageChart({ usage, id }: { usage: DailyUsage; id: string }) {
  const { from, counts, refused } = usage;
  const totals = counts.map((n, i) => n + (refused[i] ?? 0));
  const max = Math.max(...totals, 0);
  const allowedSum = counts.reduce((a, b) => a + b, 0);
  const refusedSum = refused.reduce((a, b) => a + b, 0);
  const busiest = totals.indexOf(max);
  const last = dayAfter(from, counts.length - 1);
  const inAll = refusedSum === 0 ? `${allowedSum}` : `${allowedSum} allowed and ${refusedSum} refused`;
  const summary =
    max === 0
      ? `No calls per day from ${from} to ${last}.`
      : `Calls per day from ${from} to ${last}: ${inAll} in all, at most ${max} on ${dayAfter(from, busiest)}.`;
  const width = counts.length * (BAR + GAP);
  const px = (n: number) => (max === 0 ? 0 : Math.max(n > 0 ? 1 : 0, Math.round((n / max) * HEIGHT)));
  return (
    <>
      <div class="chart-box">
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
            const no = refused[i] ?? 0;
            const h = px(n);
            const r = px(no);
            const day = dayAfter(from, i);
            const label = refusedSum === 0 ? `${day}: ${n}` : `${day}: ${n} allowed, ${no} refused`;
            return (
              <g>
                <title>{label}</title>
                <rect x={i * (BAR + GAP)} y={HEIGHT - h} width={BAR} height={h} />
                {refusedSum > 0 && (
                  <rect class="refused" x={i * (BAR + GAP)} y={HEIGHT - h - r} width={BAR} height={r} />
                )}
              </g>
            );
          })}
        </svg>
        <p class="chart-axis muted" aria-hidden="true">
          <span>{shortDay(from)}</span>
          <span>{shortDay(last)}</span>
        </p>
      </div>
      {refusedSum > 0 && (
        <p class="chart-legend muted">
          <span class="swatch allowed" aria-hidden="true" /> allowed <span class="swatch refused" aria-hidden="true" />{" "}
          <span>refused</span>
        </p>
      )}
    </>
  );
}
