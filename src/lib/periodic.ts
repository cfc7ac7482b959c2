import type { Logger } from "pino";

/**
 * A background pass run every `intervalMs`, one at a time: a tick that finds the previous pass
 * still running skips. A failed pass is logged (`what` names it) and the next tick retries. The
 * timer does not keep the process alive; `stop` waits for a pass in flight.
 */
export class Periodic {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly what: string,
    private readonly pass: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.pass()
        .catch((err: unknown) =>
          this.logger.warn({ err: (err as Error).message }, `${this.what} failed; next pass retries`),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
