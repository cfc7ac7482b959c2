import { createHash, hash } from "node:crypto";

/** SHA-256 of a string, as 64 hex characters (API keys, idempotent request bodies). */
export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

/** SHA-1 of bytes (or a string's UTF-8 bytes), as 40 hex characters (strong ETags, as hono/etag writes them). */
export const sha1Hex = (data: string | Uint8Array): string => hash("sha1", data, "hex");
