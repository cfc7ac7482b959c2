import { Worker } from "node:worker_threads";
import { sqliteDriverPath } from "./sqlite.js";

/**
 * The checkpointing thread's code (CommonJS, evaluated): its own connection to the file, and for
 * each message a look at the WAL-index header in the `-shm` file (sqlite.org/walformat.html:
 * mxFrame, the frames in the WAL, at byte 16; nBackfill, those already copied into the database,
 * at byte 96), and a PASSIVE checkpoint once CHECKPOINT_PAGES or more wait. PASSIVE never waits
 * for a lock and never blocks a writer. "close" checkpoints and closes the connection, which (the
 * last one on the file) removes the WAL.
 */
const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { openSync, readSync, closeSync } = require("node:fs");
const { endianness } = require("node:os");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 2000");
const header = Buffer.alloc(100);
const u32 = endianness() === "LE" ? (at) => header.readUInt32LE(at) : (at) => header.readUInt32BE(at);
function waiting() {
  try {
    const fd = openSync(workerData.file + "-shm", "r");
    try {
      if (readSync(fd, header, 0, 100, 0) < 100) return 0;
    } finally {
      closeSync(fd);
    }
    return u32(16) - u32(96);
  } catch {
    return 0;
  }
}
parentPort.on("message", (m) => {
  try {
    if (m === "close" || waiting() >= workerData.pages) db.pragma("wal_checkpoint(PASSIVE)");
  } catch {}
  if (m === "close") {
    db.close();
    parentPort.close();
  }
});
`;

/** SQLite's own threshold for its automatic checkpoint (wal_autocheckpoint's default), in pages. */
export const CHECKPOINT_PAGES = 1000;

/** How long after a commit the checkpointing thread looks at the WAL (so at most once a second). */
export const CHECKPOINT_AFTER_MS = 1000;

/**
 * WAL checkpoints of a SQLite file in a thread of their own, for a connection that commits on the
 * event loop. A checkpoint copies the WAL into the database file and, with `synchronous = NORMAL`,
 * fsyncs both: measured on the bench's VM, 4–20 ms for the WAL and 4–8 ms for the file, which
 * SQLite's automatic checkpoint (every 1,000 pages of WAL) spends inside whichever commit crosses
 * the line — every few seconds under load, on the event loop (docs/benchmarks.md, "Tenth
 * session"). The connection is told not to (`wal_autocheckpoint = 0`); `committed()` has this
 * thread look at the WAL at most CHECKPOINT_AFTER_MS later and checkpoint it at the same
 * CHECKPOINT_PAGES, so the WAL stays the size it was. What stays on the event loop is one fsync
 * of the WAL's header when the next commit starts the WAL over (SQLite makes the writer do that,
 * even in NORMAL), once per CHECKPOINT_PAGES as before. The thread starts at the first request
 * (none at start-up or while idle) and stops at `close()`. If it cannot run, the connection
 * checkpoints by itself again, as before.
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failed = false;
  private closed = false;

  constructor(
    private readonly file: string,
    /** The connection that commits: its automatic checkpoints are turned off (and back on on failure). */
    private readonly autocheckpoint: (pages: number) => void,
  ) {
    autocheckpoint(0);
  }

  /** After a commit: a checkpoint within CHECKPOINT_AFTER_MS, off this thread. */
  committed(): void {
    if (this.timer || this.failed || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start()?.postMessage("checkpoint");
    }, CHECKPOINT_AFTER_MS).unref();
  }

  /** Stops the thread; its connection, the file's last one once the caller's is closed, checkpoints what is left. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    worker.postMessage("close");
    const deadline = setTimeout(() => void worker.terminate(), 5000).unref();
    await exited;
    clearTimeout(deadline);
  }

  private start(): Worker | undefined {
    if (this.failed || this.closed) return undefined;
    if (this.worker) return this.worker;
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: { driver: sqliteDriverPath(), file: this.file, pages: CHECKPOINT_PAGES },
    });
    worker.unref();
    worker.on("error", () => this.fail());
    worker.on("exit", (code) => {
      if (!this.closed && code !== 0) this.fail();
    });
    this.worker = worker;
    return worker;
  }

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    this.worker = undefined;
    if (!this.closed) this.autocheckpoint(1000);
  }
}
