import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ExpiredRowsSweep } from "../../src/db/expired-rows.js";
import { IDEMPOTENCY_EXPIRY, IDEMPOTENCY_TTL_MS } from "../../src/db/idempotency.js";
import { IDEMPOTENCY_IN_PROGRESS, IDEMPOTENCY_MISMATCH } from "../../src/features/shared/idempotency-answers.js";
import { FakeClassifierProvider } from "../fakes/classifier-provider.js";
import {
  errorOf,
  keysOver,
  type TestApp,
  type TestServer,
  testApp,
  testServer,
  withTwoInstances,
} from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bearer, classify, PERMISSION, remainingOf, unkeyHarness, until } from "../helpers/key-stores.js";

const COPIES = 30;
const USES = 100;

let provider: FakeClassifierProvider;
beforeAll(async () => {
  provider = await new FakeClassifierProvider().start();
});
afterAll(() => provider.close());
afterEach(() => {
  provider.release();
  Object.assign(provider, { fault: null, status: null });
  provider.calls.length = 0;
});

/** The app on the (gateable) HTTP classifier; `env` adds to it. */
const upstreamEnv = (env: Record<string, string> = {}) => ({
  CLASSIFIER_URL: `${provider.url}/models/sentiment`,
  UPSTREAM_TIMEOUT_MS: "20000",
  IDEMPOTENCY_WAIT_MS: "20000",
  ...env,
});

const newKey = (t: TestApp) => t.deps.keys.create({ name: "idem", permissions: [PERMISSION], remaining: USES });
const replayed = (r: Response) => r.headers.get("idempotent-replayed") === "true";

/**
 * A classify call with `headers` that the client cuts while the (gated) classifier holds it: the
 * key is charged while it runs, and given its use back once the call is cut.
 */
async function abortMidJob(s: TestServer, headers: Record<string, string>, id: string) {
  provider.gate();
  const abort = new AbortController();
  const cut = fetch(`${s.url}/v1/vibe/classify`, {
    method: "POST",
    headers,
    body: JSON.stringify(["good"]),
    signal: abort.signal,
  }).catch((err: Error) => err.name);
  await until(
    () => provider.calls.length,
    (n) => n > 0,
  );
  expect(await remainingOf(s.deps.keys, id)).toBe(USES - 1); // charged while it runs
  abort.abort();
  expect(await cut).toBe("AbortError");
  expect(
    await until(
      () => remainingOf(s.deps.keys, id),
      (n) => n === USES,
    ),
  ).toBe(USES);
}

/**
 * 30 copies of one request (same Idempotency-Key and body) at once, spread over `apps`, while
 * the classifier holds its answer: the classifier runs once, the key is charged once, one answer
 * is fresh and the 29 others are replays of it.
 */
async function burst(apps: TestApp[]) {
  const first = apps[0] as TestApp;
  const { key, id } = await newKey(first);
  const headers = { ...bearer(key), "Idempotency-Key": "burst-1" };
  provider.gate();
  const pending = Array.from({ length: COPIES }, (_, i) =>
    classify(apps[i % apps.length] as TestApp, ["so good", "meh"], headers),
  );
  expect(
    await until(
      () => provider.calls.length,
      (n) => n > 0,
    ),
  ).toBe(1);
  await new Promise((r) => setTimeout(r, 300)); // let every copy reach its claim
  provider.release();
  const responses = await Promise.all(pending);
  expect(await remainingOf(first.deps.keys, id)).toBe(USES - 1);
  expect(responses.map((r) => r.status)).toEqual(Array(COPIES).fill(200));
  expect(responses.filter((r) => !replayed(r))).toHaveLength(1);
  const bodies = new Set(await Promise.all(responses.map((r) => r.text())));
  expect(bodies.size).toBe(1);
  expect(provider.calls).toHaveLength(1);
}

describe("concurrent duplicates of one Idempotency-Key: one job, one charge", () => {
  it(`SQLite: ${COPIES} copies at once → 1 charge, 1 fresh answer, ${COPIES - 1} replays`, async () => {
    const t = await testApp(upstreamEnv());
    try {
      await burst([t]);
    } finally {
      await t.close();
    }
  });

  describe.skipIf(!DATABASE_URL)(`PostgreSQL ${skipReason({ postgres: true }) ?? ""}`, () => {
    it(`two instances on one database: ${COPIES} copies at once → 1 charge, ${COPIES - 1} replays`, async () => {
      await withTwoInstances(upstreamEnv(), burst);
    });
  });

  it("a copy that waits longer than IDEMPOTENCY_WAIT_MS gets 409 with Retry-After, free; another body 409 at once", async () => {
    const t = await testApp(upstreamEnv({ IDEMPOTENCY_WAIT_MS: "200" }));
    try {
      const { key, id } = await newKey(t);
      const headers = { ...bearer(key), "Idempotency-Key": "slow-1" };
      provider.gate();
      const owner = classify(t, ["good"], headers);
      await until(
        () => provider.calls.length,
        (n) => n > 0,
      );
      const copy = await classify(t, ["good"], headers);
      expect(copy.status).toBe(409);
      expect(copy.headers.get("retry-after")).toBe("1");
      expect((await errorOf(copy)).error).toMatchObject({ code: "conflict", message: IDEMPOTENCY_IN_PROGRESS });
      const other = await classify(t, ["bad"], headers);
      expect((await errorOf(other)).error).toMatchObject({ code: "conflict", message: IDEMPOTENCY_MISMATCH });
      provider.release();
      expect((await owner).status).toBe(200);
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
    } finally {
      await t.close();
    }
  });
});

describe("a failed or cut job releases its key and gives its use back", () => {
  it("classifier 502: not charged, and the retry with the same key runs (one charge)", async () => {
    const t = await testApp(upstreamEnv());
    try {
      const { key, id } = await newKey(t);
      const headers = { ...bearer(key), "Idempotency-Key": "fails-once" };
      provider.status = 500;
      expect((await classify(t, ["good"], headers)).status).toBe(502);
      expect(await remainingOf(t.deps.keys, id)).toBe(USES);
      provider.status = null;
      const retry = await classify(t, ["good"], headers);
      expect([retry.status, replayed(retry)]).toEqual([200, false]);
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
      // Without an Idempotency-Key a 502 is given back too.
      provider.status = 503;
      expect((await classify(t, ["good"], bearer(key))).status).toBe(502);
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
    } finally {
      await t.close();
    }
  });

  it("GET /v1/usage counts only charged calls: a 502 given back is not in `requests`, with or without a count of uses", async () => {
    const t = await testApp(upstreamEnv());
    try {
      const counted = await newKey(t);
      const unlimited = await t.deps.keys.create({ name: "unlimited", permissions: [PERMISSION] });
      for (const { key } of [counted, unlimited]) {
        for (let i = 0; i < 2; i++) expect((await classify(t, ["good"], bearer(key))).status).toBe(200);
        provider.status = 500;
        expect((await classify(t, ["good"], bearer(key))).status).toBe(502);
        expect((await classify(t, ["good"], { ...bearer(key), "Idempotency-Key": "fails" })).status).toBe(502);
        provider.status = null;
      }
      const usage = async (key: string) => (await t.app.request("/v1/usage", { headers: bearer(key) })).json();
      expect(await usage(counted.key)).toMatchObject({
        remaining_uses: USES - 2,
        requests: { last_24h: 2, last_30d: 2 },
      });
      expect(await usage(unlimited.key)).toMatchObject({
        remaining_uses: null,
        requests: { last_24h: 2, last_30d: 2 },
      });
    } finally {
      await t.close();
    }
  });

  it("Unkey: a 502 is given back with keys.updateCredits, and the retry is charged once", async () => {
    const h = await unkeyHarness(upstreamEnv());
    const unkey = h.unkey as NonNullable<typeof h.unkey>;
    try {
      const { key, id } = await h.keys.create({ name: "u", permissions: [PERMISSION], remaining: USES });
      const headers = { ...bearer(key), "Idempotency-Key": "unkey-fails-once" };
      provider.status = 500;
      expect((await classify(h.t, ["good"], headers)).status).toBe(502);
      expect(unkey.callsTo("/v2/keys.updateCredits").map((c) => c.body)).toEqual([
        { keyId: id, operation: "increment", value: 1 },
      ]);
      expect(await remainingOf(h.keys, id)).toBe(USES);
      provider.status = null;
      expect((await classify(h.t, ["good"], headers)).status).toBe(200);
      expect((await classify(h.t, ["good"], headers)).headers.get("idempotent-replayed")).toBe("true");
      expect(await remainingOf(h.keys, id)).toBe(USES - 1);
    } finally {
      await h.close();
    }
  });

  it("client abort mid-job: the use is given back, and the retry with the same key runs at once", async () => {
    const s = await testServer(upstreamEnv());
    try {
      const { key, id } = await newKey(s);
      const headers = { ...bearer(key), "Idempotency-Key": "aborted-1", "Content-Type": "application/json" };
      await abortMidJob(s, headers, id);
      provider.release();
      const retry = await fetch(`${s.url}/v1/vibe/classify`, { method: "POST", headers, body: '["good"]' });
      expect([retry.status, replayed(retry)]).toEqual([200, false]);
      expect(await remainingOf(s.deps.keys, id)).toBe(USES - 1);
    } finally {
      await s.close();
    }
  });

  it("client abort mid-job without an Idempotency-Key: the use is given back too, and not counted as charged", async () => {
    const s = await testServer(upstreamEnv());
    try {
      const { key, id } = await newKey(s);
      await abortMidJob(s, { ...bearer(key), "Content-Type": "application/json" }, id);
      provider.release();
      const usage = await (await s.app.request("/v1/usage", { headers: bearer(key) })).json();
      expect(usage).toMatchObject({ remaining_uses: USES, requests: { last_24h: 0 } });
    } finally {
      await s.close();
    }
  });
});

describe("claims older than 24 h are swept (the expired-rows sweep main.ts runs)", () => {
  it.each([false, true])("PostgreSQL: %s — old claims go, live ones stay and still replay", async (pg) => {
    if (pg && !DATABASE_URL) return;
    const schema = pg ? await freshPostgresUrl() : undefined;
    const t = await testApp(schema ? { DATABASE_URL: schema.url } : {});
    try {
      const db = t.deps.database.db;
      const { key, id } = await newKey(t);
      const call = (k: string) => classify(t, ["a good day"], { ...bearer(key), "Idempotency-Key": k });
      expect((await call("old")).status).toBe(200);
      expect((await call("live")).status).toBe(200);
      const dayAndAMinute = new Date(Date.now() - IDEMPOTENCY_TTL_MS - 60_000).toISOString();
      await db.updateTable("idempotency").set({ created_at: dayAndAMinute }).where("key", "=", "old").execute();
      const sweep = new ExpiredRowsSweep(t.deps.database, t.deps.logger, t.deps.now, [IDEMPOTENCY_EXPIRY]);

      expect(await sweep.runOnce()).toEqual({ idempotency: 1 });
      expect(await sweep.runOnce()).toEqual({ idempotency: 0 });
      const left = await db.selectFrom("idempotency").select("key").execute();
      expect(left.map((r) => r.key)).toEqual(["live"]);
      expect(replayed(await call("live"))).toBe(true);
      const again = await call("old");
      expect([again.status, replayed(again)]).toEqual([200, false]); // a new call, charged
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 3);
    } finally {
      await t.close();
      await schema?.drop();
    }
  });
});

/** A promise and the function that settles it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * A holder that outlives its lease, as a process whose event loop stalls longer than
 * IDEMPOTENCY_LEASE_MS (or whose data tier is away that long) does: its renewals do not land, a
 * retry takes the claim over, and the holder carries on afterwards. Every write of the holder is
 * guarded by its owner id, and the charge is on the claim, so the key is still charged once and the
 * stored answer is the one the retry stored.
 */
describe("a holder that outlives its lease while a retry takes its claim over: charged once", () => {
  const LEASE = "300";
  const pastTheLease = () => new Promise((r) => setTimeout(r, 450));

  /** The app whose renewals never land, and whose first charged verification or first job waits for `hold`. */
  async function stalledApp(pg: boolean, at: "verify" | "job", hold: Promise<void>, jobFails = false) {
    const schema = pg ? await freshPostgresUrl() : undefined;
    let first = true;
    const once = () => {
      const was = first;
      first = false;
      return was;
    };
    const t = await testApp({ IDEMPOTENCY_LEASE_MS: LEASE, ...(schema && { DATABASE_URL: schema.url }) }, (built) => ({
      idempotency: new Proxy(built.idempotency, {
        get: (target, prop) =>
          prop === "renew" ? async () => true : (Reflect.get(target, prop) as () => unknown).bind(target),
      }),
      keys:
        at === "verify"
          ? keysOver(built, {
              verify: async (key, permission, opts) => {
                if ((opts?.cost ?? 1) > 0 && once()) await hold;
                return built.keys.verify(key, permission, opts);
              },
              refund: (id, uses, refund) => built.keys.refund(id, uses, refund),
            })
          : built.keys,
      classifier: new Proxy(built.classifier, {
        get: (target, prop, receiver) =>
          prop !== "classify"
            ? Reflect.get(target, prop, receiver)
            : async (texts: readonly string[]) => {
                if (at !== "job" || !once()) return target.classify(texts);
                await hold;
                return jobFails ? { ok: false as const, detail: "failed after its stall" } : target.classify(texts);
              },
      }),
    }));
    return {
      t,
      close: async () => {
        await t.close();
        await schema?.drop();
      },
    };
  }

  const both = ["SQLite", ...(DATABASE_URL ? ["PostgreSQL"] : [])];

  it.each(
    both.flatMap((db) => [
      [db, "succeeds", 200],
      [db, "fails", 502],
    ]),
  )(
    "charged, then stalled in its job (%s), which then %s: the retry runs free and its answer stands; the holder gives nothing back",
    async (db, then, holderStatus) => {
      const hold = gate();
      const { t, close } = await stalledApp(db === "PostgreSQL", "job", hold.opened, then === "fails");
      try {
        const { key, id } = await newKey(t);
        const headers = { ...bearer(key), "Idempotency-Key": `stalled-job-${db}-${then}` };
        const holder = classify(t, ["so good"], headers);
        await until(
          () => remainingOf(t.deps.keys, id),
          (n) => n === USES - 1,
        );
        await pastTheLease();
        const retry = await classify(t, ["so good"], headers);
        expect([retry.status, replayed(retry)]).toEqual([200, false]);
        hold.open();
        expect((await holder).status).toBe(holderStatus);
        await new Promise((r) => setTimeout(r, 300)); // any undo the holder would run has run
        expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
        // The holder's late answer (or failure) is not stored over the retry's.
        const replay = await classify(t, ["so good"], headers);
        expect([replay.status, replayed(replay), await replay.text()]).toEqual([200, true, await retry.text()]);
      } finally {
        hold.open();
        await close();
      }
    },
  );

  it.each(both)(
    "stalled before its charge (%s): the retry pays; the holder's late charge is given back, 409",
    async (db) => {
      const hold = gate();
      const { t, close } = await stalledApp(db === "PostgreSQL", "verify", hold.opened);
      try {
        const { key, id } = await newKey(t);
        const headers = { ...bearer(key), "Idempotency-Key": `stalled-verify-${db}` };
        // A key already in use (a first call of a new key holds the others with it until its verdict).
        expect((await classify(t, [], bearer(key))).status).toBe(400);
        const holder = classify(t, ["so good"], headers);
        await pastTheLease();
        const retry = await classify(t, ["so good"], headers);
        expect([retry.status, replayed(retry)]).toEqual([200, false]);
        expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
        hold.open();
        const late = await holder;
        expect([late.status, Number(late.headers.get("retry-after")) > 0]).toEqual([409, true]);
        expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
        const replay = await classify(t, ["so good"], headers);
        expect([replay.status, replayed(replay)]).toEqual([200, true]);
      } finally {
        hold.open();
        await close();
      }
    },
  );
});
