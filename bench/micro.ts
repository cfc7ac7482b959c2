import { performance } from "node:perf_hooks";
import vaderSentiment from "vader-sentiment";
import { VaderClassifier } from "../src/adapters/classifier/vader.js";
import { polarityScores } from "../src/adapters/classifier/vader-scores.js";
import { fakeOpenMeteo } from "../test/fakes/open-meteo.js";
import { fakePostcodesIo, POSTCODES } from "../test/fakes/postcodes-io.js";
import { testApp } from "../test/helpers/app.js";
import { CLASSIFY_TEXTS, SW1A_1AA } from "./fixtures.js";

/**
 * In-process figures that a loaded machine disturbs far less than autocannon: `app.request()`
 * in a loop (no sockets): requests per second (wall clock) and process CPU time per request,
 * each the best of `MICRO_ROUNDS` rounds of `MICRO_MS` ms; CPU time is the steadier of the two
 * on a shared machine. `node --import tsx bench/micro.ts [moon,vat,weather,classify,model]` (model: the classifier alone,
 * trained and VADER, then VADER's four scores alone: the package's polarity_scores and vader-scores.ts's).
 */

const ROUNDS = Number(process.env.MICRO_ROUNDS ?? 5);
const ROUND_MS = Number(process.env.MICRO_MS ?? 1000);
const only = process.argv[2]?.split(",");
const wanted = (k: string) => !only || only.includes(k);

async function rate(label: string, once: () => Promise<unknown> | unknown, perCall = 1): Promise<void> {
  for (let i = 0; i < 200; i++) await once();
  let best = 0;
  let bestCpu = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < ROUND_MS) {
      for (let i = 0; i < 20; i++) await once();
      n += 20;
      t = performance.now();
    }
    const cpu = process.cpuUsage(cpu0);
    best = Math.max(best, (n * 1000) / (t - t0));
    bestCpu = Math.min(bestCpu, (cpu.user + cpu.system) / n);
  }
  const extra = perCall > 1 ? ` (${Math.round(best * perCall).toLocaleString("en")} texts/s)` : "";
  console.log(
    `${label.padEnd(30)} ${Math.round(best).toLocaleString("en").padStart(8)} /s  ${bestCpu.toFixed(0).padStart(5)} µs CPU each${extra}`,
  );
}

async function expectOk(res: Response): Promise<void> {
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function main() {
  const postcodes = await fakePostcodesIo([...POSTCODES, SW1A_1AA]);
  const meteo = await fakeOpenMeteo();
  const t = await testApp({
    DEMO_HOURLY_LIMIT: "1000000",
    POSTCODES_BASE_URL: postcodes.url,
    OPEN_METEO_BASE_URL: meteo.url,
  });
  const get = (path: string) => async () => expectOk(await t.app.request(path));
  if (wanted("moon")) await rate("GET /v1/moon", get("/v1/moon?date=2025-06-01&lat=51.5&lon=-0.12"));
  if (wanted("moon")) await rate("GET /v1/moon (now)", get("/v1/moon?lat=51.5&lon=-0.12"));
  if (wanted("sun")) await rate("GET /v1/sun", get("/v1/sun?date=2025-06-01&lat=51.5&lon=-0.12"));
  if (wanted("vat")) await rate("GET /v1/vat", get("/v1/vat?code=DE"));
  if (wanted("weather")) await rate("GET /v1/weather (cached)", get("/v1/weather?postcode=SW1A1AA"));
  if (wanted("classify")) {
    const { key } = await t.deps.keys.create({ name: "micro", permissions: ["vibe.classify"] });
    const body = JSON.stringify({ texts: CLASSIFY_TEXTS });
    const init = {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    };
    await rate(
      "POST /v1/vibe/classify (20)",
      async () => expectOk(await t.app.request("/v1/vibe/classify", init)),
      CLASSIFY_TEXTS.length,
    );
  }
  if (wanted("vader") || wanted("model")) {
    // the served (trained) model, then plain VADER (CLASSIFIER_MODEL=vader) for comparison
    const served = t.deps.classifier;
    await rate(`classifier only: ${served.model.name} (20 texts)`, () => served.classify(CLASSIFY_TEXTS), 20);
    const vader = new VaderClassifier();
    await rate("classifier only: vader-sentiment (20 texts)", () => vader.classify(CLASSIFY_TEXTS), 20);
    const pkg = vaderSentiment.SentimentIntensityAnalyzer;
    await rate("VADER scores: package (20 texts)", () => CLASSIFY_TEXTS.map((x) => pkg.polarity_scores(x)), 20);
    await rate("VADER scores: vader-scores.ts (20)", () => CLASSIFY_TEXTS.map((x) => polarityScores(x)), 20);
  }
  await t.close();
  await postcodes.close();
  await meteo.close();
}

await main();
