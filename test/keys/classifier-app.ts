import { afterAll, beforeAll } from "vitest";
import { FakeClassifierProvider } from "../fakes/classifier-provider.js";
import { type TestApp, testApp } from "../helpers/app.js";

/** An app classifying through the gateable fake provider, for the suite it is called in. */
export function classifierApp(): { provider: () => FakeClassifierProvider; t: () => TestApp } {
  let provider: FakeClassifierProvider | undefined;
  let t: TestApp | undefined;
  beforeAll(async () => {
    provider = await new FakeClassifierProvider().start();
    t = await testApp({ CLASSIFIER_URL: `${provider.url}/models/sentiment`, UPSTREAM_TIMEOUT_MS: "30000" });
  });
  afterAll(async () => {
    provider?.release();
    await t?.close();
    await provider?.close();
  });
  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("classifierApp: used outside its suite");
    return v;
  };
  return { provider: () => need(provider), t: () => need(t) };
}
