import pino, { type Logger } from "pino";

/** JSON lines, or pretty output when attached to a terminal. */
export function createLogger(level: string, pretty = process.stdout.isTTY === true): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    ...(pretty && { transport: { target: "pino-pretty", options: { translateTime: "SYS:HH:MM:ss.l" } } }),
  });
}
