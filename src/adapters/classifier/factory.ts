import type { Config } from "../../config.js";
import type { Classifier } from "../../ports/classifier.js";
import { TrainedClassifier } from "./trained.js";
import { UpstreamClassifier } from "./upstream.js";
import { VaderClassifier } from "./vader.js";

/**
 * The upstream provider when CLASSIFIER_URL is set, else the embedded model: the trained one
 * (default), or VADER when CLASSIFIER_MODEL=vader.
 */
export function createClassifier(config: Config): Classifier {
  if (config.CLASSIFIER_URL) {
    return new UpstreamClassifier({
      url: config.CLASSIFIER_URL,
      token: config.CLASSIFIER_TOKEN,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      maxBytes: config.UPSTREAM_MAX_BYTES,
    });
  }
  return config.CLASSIFIER_MODEL === "vader" ? new VaderClassifier() : new TrainedClassifier();
}
