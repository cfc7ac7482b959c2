/**
 * Writes the served /v1/openapi.json to a file (for the linters): the real app on embedded
 * dependencies in a temporary DATA_DIR, no network. Usage: node --import tsx scripts/openapi-dump.ts OUT
 */
import { writeFileSync } from "node:fs";
import { servedOpenApi } from "./served-openapi.js";

const out = process.argv[2] ?? "openapi.json";
const doc = await servedOpenApi(process.env.PUBLIC_URL ?? "https://almanac.example");
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
