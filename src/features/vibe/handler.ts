import type { Context } from "hono";
import { z } from "zod";
import type { AppDeps } from "../../deps.js";
import { ApiError } from "../../http/errors.js";
import { readJsonBody } from "../../http/json-body.js";
import { acceptVerification, MISSING_KEY_MESSAGE, parseBearer } from "../../http/key-auth.js";
import type { AppEnv } from "../../http/types.js";
import { sha256Hex } from "../../lib/hash.js";
import { LABELS } from "../../ports/classifier.js";
import { answerPrior, once } from "../shared/idempotency.js";
import { type BodyCheck, type ClassifyResponseBody, checkClassifyBody } from "./schema.js";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Reads and checks the body without throwing: its verdict is reported only after authentication. */
async function readBody(c: Context<AppEnv>, maxBytes: number): Promise<BodyCheck | ApiError> {
  try {
    return checkClassifyBody(await readJsonBody(c, maxBytes));
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

function invalidBody(check: BodyCheck | ApiError): ApiError | null {
  if (check instanceof ApiError) return check;
  if (check.ok) return null;
  return new ApiError(
    "invalid_body",
    "Request body is invalid: send 1 to 20 non-empty strings, each at most 5,000 characters.",
    { details: z.flattenError(check.error) as unknown as Record<string, unknown> },
  );
}

/**
 * `POST /v1/vibe/classify`. Responses follow the spec's order — auth errors, then body errors,
 * then the job — and the key is verified on every call (spec §4.5), replays included.
 *
 * Charging: verification spends one use only when the job will run, i.e. the body is valid and
 * the `Idempotency-Key` (if any) is not already recorded. Replays, conflicts and invalid bodies
 * are verified with cost 0 (still refused for an unknown, revoked, expired, forbidden or
 * rate-limited key). To know that before verifying, the body is read first and the stored
 * outcome is looked up read-only, under a scope derived from the key's SHA-256.
 */
export async function classifyHandler(c: Context<AppEnv>, deps: AppDeps): Promise<Response> {
  const token = parseBearer(c.req.header("authorization"));
  if (token === null) throw new ApiError("unauthorized", MISSING_KEY_MESSAGE);

  const check = await readBody(c, deps.config.BODY_LIMIT_BYTES);
  const bodyError = invalidBody(check);
  const idemKey = c.req.header("idempotency-key");
  const idemKeyValid = idemKey === undefined || IDEMPOTENCY_KEY.test(idemKey);
  const texts = check instanceof ApiError || !check.ok ? null : check.texts;
  const scope = `classify:${sha256Hex(token)}`;
  const bodyHash = texts ? sha256Hex(JSON.stringify(texts)) : "";
  const prior = texts && idemKey && idemKeyValid ? await deps.idempotency.peek(scope, idemKey, bodyHash) : null;
  const runs = texts !== null && idemKeyValid && prior === null;

  const permission = deps.config.KEY_PERMISSION;
  acceptVerification(await deps.keys.verify(token, permission, { cost: runs ? 1 : 0 }), permission);

  if (bodyError) throw bodyError;
  if (!idemKeyValid) {
    throw new ApiError("invalid_body", "Idempotency-Key must be 1 to 255 visible ASCII characters.");
  }
  if (texts === null) throw new Error("unreachable: a body without texts has an error");
  if (prior) return answerPrior(c, prior);
  if (!idemKey) return c.json(await classify(deps, texts), 200);

  return once(c, deps.idempotency, { scope, key: idemKey, bodyHash }, async () => ({
    body: await classify(deps, texts),
  }));
}

async function classify(deps: AppDeps, texts: string[]): Promise<ClassifyResponseBody> {
  const outcome = await deps.classifier.classify(texts);
  if (!outcome.ok) {
    deps.logger.warn({ detail: outcome.detail }, "classifier failed");
    throw new ApiError("upstream_error", "The classification provider failed; retry later.");
  }
  return {
    model: deps.classifier.model,
    labels: [...LABELS],
    results: outcome.results.map((r, index) => ({ index, ...r })),
    usage: { texts: texts.length },
  };
}
