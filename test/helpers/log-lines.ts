import { Writable } from "node:stream";
import pino from "pino";

export interface LogLine {
  level: number;
  msg: string;
  lib?: string;
  status?: number;
}

/** A pino logger at `debug` whose JSON lines are parsed into `lines`, for tests that read logs. */
export function capturedLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, sink), lines };
}
