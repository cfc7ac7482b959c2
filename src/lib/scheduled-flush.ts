/**
 * Writes held in memory and written in the background, for an owner that keeps what is pending
 * and how to write it (`write`, which keeps what it failed to write for the next flush).
 * `schedule` arms one timer (it does not keep the process alive) that flushes after `delayMs`;
 * flushes run one after another, and a failed one (reported to `onError` when the timer ran it)
 * does not stop the next; `close` cancels the timer and flushes what is left.
 */
export class ScheduledFlush {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: () => Promise<void>,
    private readonly opts: { delayMs?: number; onError?: (err: unknown) => void } = {},
  ) {}

  /** Flushes within `delayMs`, unless a flush is already due. */
  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((err: unknown) => this.opts.onError?.(err));
    }, this.opts.delayMs ?? 1000);
    this.timer.unref?.();
  }

  /** Writes what is pending now, after any flush in flight has settled. */
  flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
