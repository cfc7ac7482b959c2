import { describe, expect, it } from "vitest";
import { BodyTooLarge, readCapped } from "../../src/adapters/upstream-http.js";

/** A response whose body is `chunks` chunks of `size` bytes, counting how many were pulled. */
function counted(chunks: number, size: number, headers: Record<string, string> = {}) {
  const pulled = { chunks: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.chunks >= chunks) return controller.close();
      pulled.chunks++;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
  return { res: new Response(body, { headers }), pulled };
}

describe("readCapped: upstream bodies are read up to a cap and no further", () => {
  it("reads a body under the cap whole", async () => {
    const { res } = counted(3, 1000);
    expect(await readCapped(res, 10_000)).toHaveLength(3000);
  });

  it("stops pulling as soon as the cap is passed (memory stays bounded by the cap)", async () => {
    const { res, pulled } = counted(100_000, 64 * 1024); // a 6.5 GB body
    await expect(readCapped(res, 1024 * 1024)).rejects.toBeInstanceOf(BodyTooLarge);
    // 1 MiB cap / 64 KiB chunks: the 17th chunk passes it; nothing after it is read.
    expect(pulled.chunks).toBeLessThanOrEqual(18);
  });

  it("refuses a declared Content-Length over the cap without reading", async () => {
    const { res, pulled } = counted(10, 10, { "content-length": "300000000" });
    await expect(readCapped(res, 1024 * 1024)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(pulled.chunks).toBeLessThanOrEqual(1);
  });

  it("decodes UTF-8 split across chunks", async () => {
    const bytes = new TextEncoder().encode("€uro");
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 1));
        c.enqueue(bytes.slice(1));
        c.close();
      },
    });
    expect(await readCapped(new Response(body), 100)).toBe("€uro");
  });
});
