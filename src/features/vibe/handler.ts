import type { Context } from "hono";
import { z } from "zod";
import type { AppDeps } from "../../app-deps.js";
import { ApiError } from "../../http/errors.js";
import { readJsonBody } from "../../http/json-body.js";
import { type AuthenticatedKey, bearerToken, verifyKey } from "../../http/key-auth.js";
import type { AppEnv } from "../../http/types.js";
import { sha256Hex } from "../../lib/hash.js";
import { LABELS } from "../../ports/classifier.js";
import type { HeldClaim } from "../../ports/idempotency.js";
import {
  afterFailure,
  claimOrWait,
  holding,
  idempotencyTiming,
  settle,
  type UndoStep,
  unlessAborted,
} from "../shared/idempotency.js";
import {
  answerPrior,
  IDEMPOTENCY_KEY,
  IDEMPOTENCY_KEY_INVALID,
  idempotencyRefusalError,
} from "../shared/idempotency-answers.js";
import { type BodyCheck, type ClassifyResponseBody, checkClassifyBody, type Include, parseInclude } from "./schema.js";
import { classifySentences, isMixed } from "./sentences.js";

/** What classification uses of the app's dependencies. */
export type VibeDeps = Pick<AppDeps, "classifier" | "config" | "idempotency" | "keys" | "logger" | "now">;

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
 * `POST /v1/vibe/classify`. Responses keep one order — auth errors, then body errors,
 * then the job — and the key is verified on every call (no cached verdicts), replays and conflicts
 * included, always before the job runs.
 *
 * Charging: one use when the job runs, given back when it fails or the client goes away first.
 * With an `Idempotency-Key` the key is claimed first (scope: SHA-256 of the presented API key, so
 * claiming needs no verification), atomically: only the request that owns the claim verifies with
 * cost 1, and records on the claim that it paid — the embedded key store in the statement (or
 * transaction) that spends the use, so the record is committed with the charge or not at all.
 * Concurrent copies wait for its answer and replay it, or get a 409; they, replays and invalid
 * bodies verify with cost 0, and so does a takeover of a claim whose cut holder's charge is
 * recorded on it (one whose holder never paid pays). Undoing after a failure (the record, the
 * refund, the claim) is retried until the data tier takes it.
 */
export async function classifyHandler(c: Context<AppEnv>, deps: VibeDeps): Promise<Response> {
  const token = bearerToken(c.req.header("authorization"));

  const check = await readBody(c, deps.config.BODY_LIMIT_BYTES);
  const includeCheck = includeOf(c, deps);
  const bodyError = invalidBody(check) ?? (includeCheck instanceof ApiError ? includeCheck : null);
  const include = includeCheck instanceof ApiError ? new Set<Include>() : includeCheck;
  const idemKey = c.req.header("idempotency-key");
  const idemKeyValid = idemKey === undefined || IDEMPOTENCY_KEY.test(idemKey);
  const texts = check instanceof ApiError || !check.ok ? null : check.texts;
  // The key's rate limit as this verification spent it: on every answer from here on (its 429 too).
  const verify = (cost: number, claim?: HeldClaim) =>
    verifyKey(c, deps.keys, token, { permission: deps.config.KEY_PERMISSION, cost, ...(claim && { claim }) });

  if (texts === null || !idemKeyValid || bodyError) {
    await verify(0);
    if (bodyError) throw bodyError;
    throw new ApiError("invalid_body", IDEMPOTENCY_KEY_INVALID);
  }
  if (!idemKey) {
    const key = await verify(1);
    // A client gone before its answer is not charged (as with an Idempotency-Key): nobody gets the answer.
    const outcome = await unlessAborted(classify(deps, texts, include), c.req.raw.signal).catch(
      async (err: unknown) => {
        await refund(deps, key).catch(() => undefined);
        throw err;
      },
    );
    if (outcome.ok) return c.json(outcome.value, 200);
    await refund(deps, key).catch(() => undefined);
    throw idempotencyRefusalError(outcome.error);
  }

  // The extras asked for are part of what the key stands for (a retry asking for others is another request).
  const asked = include.size ? { texts, include: [...include].sort() } : texts;
  const spec = { scope: `classify:${sha256Hex(token)}`, key: idemKey, bodyHash: sha256Hex(JSON.stringify(asked)) };
  const timing = idempotencyTiming(deps.config, deps.now);
  const signal = c.req.raw.signal;
  const claim = await claimOrWait(deps.idempotency, spec, timing, signal);
  if (claim.kind !== "owned") {
    await verify(0);
    return answerPrior(c, claim);
  }
  const store = deps.idempotency;
  const ref = { scope: spec.scope, key: spec.key };
  // A takeover whose holder's charge is with the claim does not pay again; any other owner pays.
  const paid = claim.takeover && claim.charged;
  const leave = afterFailure(store, ref, claim.owner, paid ? "lapse" : "release");
  let key: AuthenticatedKey;
  try {
    // The key store records the charge on the claim with the spend itself, when it can.
    key = await verify(paid ? 0 : 1, paid ? undefined : { ...ref, owner: claim.owner });
  } catch (err) {
    // Refused: nothing of it is kept; the claim goes. Unverifiable: its charge may have been
    // committed, and recorded on the claim, with the answer lost on the way back; the claim is
    // kept for the retry, which takes it over and pays only if that charge is not recorded.
    const refused = err instanceof ApiError && err.status < 500;
    await settle([refused ? leave : afterFailure(store, ref, claim.owner, "lapse")], deps.now);
    throw err;
  }
  // The charge goes with the claim before the job, so whoever takes it over knows it was paid. A
  // store that recorded it there gives the use back and clears the record in one transaction;
  // otherwise the record goes first (a give-back lost after it leaves a retry paying once more,
  // never a free one).
  const giveBack: UndoStep[] = paid
    ? []
    : key.claimCharged
      ? [() => refund(deps, key, { ...ref, owner: claim.owner })]
      : [() => store.markCharged(ref, claim.owner, false), async () => void (await refund(deps, key))];
  if (!paid) {
    let recorded: boolean;
    try {
      recorded = key.claimCharged ?? (await store.markCharged(ref, claim.owner, true));
    } catch (err) {
      await settle([...giveBack, leave], deps.now);
      throw err;
    }
    if (!recorded) {
      // Taken over meanwhile (this request outlived its lease): the new holder pays, this one gives back.
      await settle(giveBack.slice(1), deps.now);
      throw idempotencyRefusalError({ kind: "in_progress" });
    }
  }
  const answer = await holding(
    store,
    ref,
    claim.owner,
    timing,
    async () => ({ body: await classify(deps, texts, include) }),
    // A paid takeover keeps the charge with the claim (lapse): the next takeover is free too.
    { signal, undo: giveBack, after: paid ? "lapse" : "release" },
  );
  if (!answer.ok) throw idempotencyRefusalError(answer.error);
  return c.json(answer.value.body, 200);
}

/**
 * Gives back the use a failed job spent (a no-op at the store for keys without a usage limit),
 * and takes the call out of the key's charged calls (`GET /v1/usage`), whatever its limits. With
 * `claim`, clears the charge the store recorded on it too (false: the claim was taken over, and
 * nothing was given back).
 */
function refund(deps: VibeDeps, key: AuthenticatedKey, claim?: HeldClaim): Promise<boolean> {
  return deps.keys.refund(key.keyId, 1, claim ? { ...key, claim } : key);
}

/** `?include=` (repeatable, comma-separated), or the 400 of an unknown value or of emotions without an emotion model. */
function includeOf(c: Context<AppEnv>, deps: VibeDeps): Set<Include> | ApiError {
  const raw = c.req.queries("include");
  if (!raw) return new Set();
  const parsed = parseInclude(raw);
  if (!parsed.ok)
    return new ApiError(
      "invalid_body",
      `Query parameter "include" is invalid: "${parsed.value.slice(0, 40)}" is not one of emotions, sentences.`,
    );
  if (parsed.include.has("emotions") && !deps.classifier.emotions)
    return new ApiError(
      "invalid_body",
      `Query parameter "include" is invalid: emotions come from the embedded model, and this server classifies with ${deps.classifier.model.name}.`,
    );
  return parsed.include;
}

/** The request's log line carries the provider's detail as error.cause. */
const upstreamError = (detail: string) =>
  new ApiError("upstream_error", "The classification provider failed; retry later.", { cause: detail });

async function classify(deps: VibeDeps, texts: string[], include: ReadonlySet<Include>): Promise<ClassifyResponseBody> {
  const outcome = await deps.classifier.classify(texts);
  if (!outcome.ok) throw upstreamError(outcome.detail);
  const body: ClassifyResponseBody = {
    model: deps.classifier.model,
    labels: [...LABELS],
    results: outcome.results.map((r, index) => ({ index, ...r })),
    usage: { texts: texts.length },
  };
  if (include.size === 0) return body;
  const emotions = include.has("emotions") ? deps.classifier.emotions?.(texts) : undefined;
  const sentences = include.has("sentences") ? await classifySentences(deps.classifier, texts) : undefined;
  if (sentences && !sentences.ok) throw upstreamError(sentences.detail);
  for (const [i, r] of body.results.entries()) {
    if (emotions) r.emotions = emotions[i] ?? [];
    if (sentences?.ok) {
      const s = sentences.sentences[i] ?? [];
      r.sentences = s;
      r.mixed = isMixed(s);
    }
  }
  return body;
}
