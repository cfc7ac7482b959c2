import { createHash } from "node:crypto";

/** SHA-256 of a string, as 64 hex characters (API keys, idempotent request bodies). */
export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");
