import type { IncomingMessage, ServerResponse } from "node:http";
import { answerFault, FaultServer, type NetFault } from "./fault-server.js";

export type Fault = NetFault | null;

export type Handler = (url: URL, req: IncomingMessage) => { status: number; body: unknown };

/**
 * A fake GET JSON API on 127.0.0.1 (port 0). Records every raw request target, exactly as it
 * arrived on the wire, and plays `fault` instead of answering when one is set.
 */
export class UpstreamFake extends FaultServer {
  readonly requests: string[] = [];
  fault: Fault = null;
  /** When set, `fault` is played only on request targets starting with it. */
  faultOn: string | null = null;
  /** Milliseconds to wait before answering (or playing the fault). */
  delayMs = 0;

  constructor(private readonly handler: Handler) {
    super();
  }

  /** Paths (with query) requested, in order. */
  get paths(): string[] {
    return this.requests;
  }

  reset(): void {
    this.requests.length = 0;
    this.fault = null;
    this.faultOn = null;
    this.delayMs = 0;
    this.release();
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests.push(req.url ?? "");
    await this.released();
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const fault = this.faultOn === null || req.url?.startsWith(this.faultOn) ? this.fault : null;
    if (answerFault(fault, req, res, '{"status":200,"result":[{"trunc')) return;
    const { status, body } = this.handler(new URL(req.url ?? "/", "http://fake.invalid"), req);
    res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
  }
}
