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

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * One kept-alive connection, for requests sent one after another on the same socket: `send`
 * writes a request and resolves with its answer (framed by Content-Length); `closed` resolves
 * when the server closes the socket.
 */
export async function keepAliveSocket(port: number, host = "127.0.0.1") {
  const socket: Socket = connect(port, host);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.setEncoding("latin1");
  let buffered = "";
  let waiting: (() => void) | undefined;
  socket.on("data", (d: string) => {
    buffered += d;
    waiting?.();
  });
  let isClosed = false;
  const closed = new Promise<void>((resolve) =>
    socket.once("close", () => {
      isClosed = true;
      waiting?.();
      resolve();
    }),
  );
  socket.on("error", () => undefined);

  /** The next whole answer in the buffer, or undefined when it is not all there yet. */
  const take = (): RawAnswer | undefined => {
    const end = buffered.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const head = buffered.slice(0, end);
    const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
    if (buffered.length < end + 4 + length) return undefined;
    const body = buffered.slice(end + 4, end + 4 + length);
    buffered = buffered.slice(end + 4 + length);
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, body };
  };

  return {
    closed,
    get isClosed() {
      return isClosed;
    },
    /** Writes `request` and resolves with the answer; rejects if the socket closes first. */
    send(request: string): Promise<RawAnswer> {
      socket.write(request);
      return new Promise((resolve, reject) => {
        const check = () => {
          const answer = take();
          if (answer) {
            waiting = undefined;
            resolve(answer);
          } else if (isClosed) {
            waiting = undefined;
            reject(new Error("the server closed the connection without a whole answer"));
          }
        };
        waiting = check;
        check();
      });
    },
    destroy: () => socket.destroy(),
  };
}
