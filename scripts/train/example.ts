/**
 * After a retrain: rewrites CLASSIFY_EXAMPLE in src/features/vibe/schema.ts and the JSON example
 * in docs/api.md with the shipped model's real answer to the documented request.
 * `node --import tsx scripts/train/example.ts`
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { TrainedClassifier } from "../../src/adapters/classifier/trained.js";
import { EXAMPLE_REQUEST } from "../../src/features/vibe/schema.js";

const c = new TrainedClassifier();
const r = await c.classify(EXAMPLE_REQUEST.texts);
if (!r.ok) throw new Error();
const results = r.results.map((x, index) => ({ index, ...x }));
const p = fileURLToPath(new URL("../../src/features/vibe/schema.ts", import.meta.url));
let s = readFileSync(p, "utf8");
const start = s.indexOf("export const CLASSIFY_EXAMPLE");
const body = `export const CLASSIFY_EXAMPLE: ClassifyResponseBody = {
  model: { provider: "embedded", name: "${c.model.name}", version: "${c.model.version}" },
  labels: ["positive", "neutral", "negative"],
  results: [
${results
  .map(
    (x) => `    {
      index: ${x.index},
      label: "${x.label}",
      confidence: ${x.confidence},
      scores: { positive: ${x.scores.positive}, neutral: ${x.scores.neutral}, negative: ${x.scores.negative} },
    },`,
  )
  .join("\n")}
  ],
  usage: { texts: 3 },
};
`;
s = s.slice(0, start) + body;
writeFileSync(p, s);
const d = fileURLToPath(new URL("../../docs/api.md", import.meta.url));
let a = readFileSync(d, "utf8");
const js = `{
  "model": { "provider": "embedded", "name": "${c.model.name}", "version": "${c.model.version}" },
  "labels": ["positive", "neutral", "negative"],
  "results": [
${results
  .map(
    (x) => `    { "index": ${x.index}, "label": "${x.label}", "confidence": ${x.confidence},
      "scores": { "positive": ${x.scores.positive}, "neutral": ${x.scores.neutral}, "negative": ${x.scores.negative} } }`,
  )
  .join(",\n")}
  ],
  "usage": { "texts": 3 }
}`;
a = a.replace(/\{\n {2}"model": \{ "provider": "embedded", "name": "[^"]+", "version": "[^"]+" \},[\s\S]*?\n\}/, js);
writeFileSync(d, a);
