import { connect, type Socket } from "node:net";

export interface RawResult {
  /** Everything the server wrote before closing (or before `timeoutMs`). */
  text: string;
  status: number | null;
  closedByServer: boolean;
  elapsedMs: number;
}

/**
 * Writes raw bytes to the server, optionally more later, and collects what comes back until the
 * server closes the socket or `timeoutMs` passes. For requests no HTTP client would send.
 */
export function rawRequest(
  port: number,
  chunks: (string | { delayMs: number })[],
  timeoutMs = 10_000,
  host = "127.0.0.1",
): Promise<RawResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, host);
    let text = "";
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : null, closedByServer, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (d) => {
      text += d;
    });
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", async () => {
      for (const chunk of chunks) {
        if (done) return;
        if (typeof chunk === "string") socket.write(chunk);
        else await new Promise((r) => setTimeout(r, chunk.delayMs));
      }
    });
  });
}

export function headerOf(raw: string, name: string): string | undefined {
  const m = new RegExp(`^${name}: (.*)$`, "im").exec(raw);
  return m?.[1]?.trim();
}

export function bodyOf(raw: string): string {
  const i = raw.indexOf("\r\n\r\n");
  return i < 0 ? "" : raw.slice(i + 4);
}
