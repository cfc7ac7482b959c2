import type { IncomingMessage, ServerResponse } from "node:http";
import { answerFault, FaultServer, type NetFault, readJson } from "./fault-server.js";

/** Faults a JSON POST fake can play instead of answering. */
export type PostFault = NetFault | "malformed" | null;

export interface RecordedCall {
  path: string;
  authorization: string | undefined;
  body: unknown;
}

/**
 * A fake JSON POST API on 127.0.0.1 (port 0). Records every call (path, Authorization, parsed
 * body), plays `fault` when one is set, and can stop listening (`refuse`) so that connections
 * are refused on the same port.
 */
export abstract class PostFake extends FaultServer {
  readonly calls: RecordedCall[] = [];
  fault: PostFault = null;
  /**
   * A fault played after the call was handled (its effect done: a credit spent, a key created),
   * instead of its answer: the answer lost on the way back (`hang`: no answer, `reset`, `garbage`);
   * only on `faultAfterPath` when set.
   */
  faultAfter: PostFault = null;
  faultAfterPath: string | null = null;
  /** When set, every call is answered `307` to this base URL plus the same path (method and body kept). */
  redirectTo: string | null = null;

  protected abstract handle(call: RecordedCall): { status: number; body: unknown };
  /** A well-formed JSON answer that does not follow the provider's schema. */
  protected abstract malformed(call: RecordedCall): unknown;

  /** Stops listening: connections to `url` are refused until `start()` again (same port). */
  async refuse(): Promise<void> {
    await this.close();
  }

  callsTo(path: string): RecordedCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const call: RecordedCall = {
      path: req.url ?? "",
      authorization: req.headers.authorization,
      body: await readJson(req),
    };
    this.calls.push(call);
    await this.released();
    if (this.redirectTo) return void res.writeHead(307, { location: `${this.redirectTo}${call.path}` }).end();
    if (answerFault(this.fault, req, res, '{"meta":{"requestId":"req_1"},"data":{"va')) return;
    const { status, body } =
      this.fault === "malformed" ? { status: 200, body: this.malformed(call) } : this.handle(call);
    const after = this.faultAfterPath === null || this.faultAfterPath === call.path ? this.faultAfter : null;
    if (answerFault(after, req, res, '{"meta":{"requestId":"req_1"},"data":{"va')) return;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}
