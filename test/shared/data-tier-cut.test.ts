import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/deps.js";
import { createContactOutbox } from "../../src/features/contact/outbox.js";
import type { Classifier } from "../../src/ports/classifier.js";
import { keysOver, type TestApp, testApp } from "../helpers/app.js";
import { freshPostgresUrl, skipReason } from "../helpers/env.js";
import { bearer, classify, PERMISSION, remainingOf, until } from "../helpers/key-stores.js";
import { expectValue } from "../helpers/result.js";
import { FaultFront } from "../resilience/support.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";

/**
 * PostgreSQL goes away at one exact point of an idempotent request (a relay in front of it
 * closes every connection, `reset`), then comes back, as a primary switch behind a proxy does.
 * The retry with the same Idempotency-Key must get its answer, charged exactly once, mailed
 * exactly once, and soon: not when the cut request's lease runs out.
 */
const USES = 10;
const PUBLIC_URL = "http://localhost:8080";
const skip = skipReason({ postgres: true });

describe.skipIf(Boolean(skip))(`PostgreSQL cut mid-request, then back ${skip ?? ""}`, () => {
  let schema: { url: string; drop: () => Promise<void> };
  let front: FaultFront;
  let smtp: SmtpTestServer;
  let t: TestApp;
  /** The same on the default lease (6 s): a retry that waited for it would get 409s until it ran out. */
  let t30: TestApp;
  /**
   * Where the next request is cut: in its key's verification, right after its charging statement
   * committed (its answer lost on the way back, as when the connection drops after the commit),
   * right after its account's rate limit refused it and gave back what the charging statement spent
   * (before the claim is released), or in its job; or its job fails with the database there.
   */
  let cutAt: "verify" | "charged" | "given-back" | "job" | "failing-job" | undefined;
  /** Keys whose refunds never land (as if the process died before they did). */
  const lostRefunds = new Set<string>();
  const cut = () => {
    front.mode = "reset";
  };

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    const direct = new URL(schema.url);
    front = await FaultFront.forUrl(`http://${direct.host}`, "").start();
    const relayed = new URL(schema.url);
    relayed.port = new URL(front.url).port;
    smtp = await startSmtpServer();
    const env = {
      DATABASE_URL: relayed.toString(),
      MAIL_URL: smtp.url,
      PUBLIC_URL,
      IDEMPOTENCY_WAIT_MS: "3000",
      MAIL_TIMEOUT_MS: "1500",
      CONTACT_PENDING_GRACE_MS: "1000",
    };
    const faults = (built: AppDeps): Partial<AppDeps> => ({
      keys: keysOver(built, {
        verify: async (key, permission, opts) => {
          if (cutAt === "verify" && (opts?.cost ?? 1) > 0) {
            cutAt = undefined;
            cut();
          }
          if (cutAt === "charged" && (opts?.cost ?? 1) > 0) {
            cutAt = undefined;
            await built.keys.verify(key, permission, opts);
            cut();
            // What the embedded store answers when the connection drops before the statement's answer.
            return { kind: "unavailable", store: "embedded", detail: "Connection terminated unexpectedly" };
          }
          if (cutAt === "given-back" && (opts?.cost ?? 1) > 0) {
            cutAt = undefined;
            const refused = await built.keys.verify(key, permission, opts);
            cut();
            return refused;
          }
          return built.keys.verify(key, permission, opts);
        },
        refund: (id, uses, refund) =>
          lostRefunds.has(id) ? Promise.reject(new Error("the process died")) : built.keys.refund(id, uses, refund),
      }),
      classifier: new Proxy(built.classifier, {
        get(target, prop, receiver) {
          if (prop !== "classify") return Reflect.get(target, prop, receiver);
          return (texts: readonly string[]): ReturnType<Classifier["classify"]> => {
            if (cutAt === "job" || cutAt === "failing-job") {
              if (cutAt === "job") cut();
              cutAt = undefined;
              return Promise.resolve({ ok: false, detail: "the job failed while the database was away" });
            }
            return target.classify(texts);
          };
        },
      }),
    });
    // A retry taking over the cut request's claim: sooner than the default 30 s, so the test also
    // sees what a takeover pays.
    t = await testApp({ ...env, IDEMPOTENCY_LEASE_MS: "500" }, faults);
    t30 = await testApp(env, faults);
  });

  afterEach(() => {
    front.mode = "pass";
    cutAt = undefined;
    lostRefunds.clear();
  });

  afterAll(async () => {
    await t?.close();
    await t30?.close();
    await front?.close();
    await smtp?.close();
    await schema?.drop();
  });

  const newKey = async (app = t) =>
    (await app.deps.keys.create({ name: "cut", permissions: [PERMISSION], remaining: USES })) as {
      key: string;
      id: string;
    };

  it("cut in the key's verification: 503 with Retry-After; the retry after the claim's lease is charged once (never free)", async () => {
    const { key, id } = await newKey();
    const headers = { ...bearer(key), "Idempotency-Key": "cut-in-verify" };
    cutAt = "verify";
    const first = await classify(t, ["a good day"], headers);
    expect([first.status, Number(first.headers.get("retry-after")) > 0]).toEqual([503, true]);
    await new Promise((r) => setTimeout(r, 700)); // the lease has passed while the database was away
    front.mode = "pass";
    const retry = await classify(t, ["a good day"], headers);
    expect(retry.status).toBe(200);
    expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
    const again = await classify(t, ["a good day"], headers);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
  });

  it.each([
    ["its own uses", {}],
    ["its own uses and rate limit (spent apart from the lookup)", { ratelimit: { limit: 100, durationSec: 60 } }],
  ])(
    "cut right after the charge committed, its answer lost (a key with %s): the retry is not charged again",
    async (_, limits) => {
      const { key, id } = (await t.deps.keys.create({
        name: "lost",
        permissions: [PERMISSION],
        remaining: USES,
        ...limits,
      })) as { key: string; id: string };
      const headers = { ...bearer(key), "Idempotency-Key": `cut-after-charge-${id}` };
      cutAt = "charged";
      const first = await classify(t, ["a good day"], headers);
      expect([first.status, Number(first.headers.get("retry-after")) > 0]).toEqual([503, true]);
      await new Promise((r) => setTimeout(r, 100));
      front.mode = "pass";
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1); // charged before the cut
      const retry = await classify(t, ["a good day"], headers);
      expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
      const again = await classify(t, ["a good day"], headers);
      expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
      await new Promise((r) => setTimeout(r, 300));
      expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
    },
  );

  it("cut after the account's rate limit refused a charged call and gave its uses back: the claim records no charge, so a retry taking it over pays", async () => {
    const ak = t.deps.keys.accounts;
    const stamp = `${Date.now()}`;
    const owner = {
      ownerId: `user_${stamp}`,
      email: `refused-${stamp}@example.test`,
      permissions: [PERMISSION],
      expiresAt: null,
    };
    const { key, id } = expectValue(await ak.create({ ...owner, name: "refused" }));
    expectValue(await ak.update(owner.ownerId, id, { remaining: 50 }));
    const pool = await ak.poolOfAccount(owner.ownerId, owner.email);
    const poolLeft = async () => (await ak.quotas.remaining(pool)) as number;
    // The free plan's 10 calls a minute, spent.
    for (let i = 0; i < 10; i++) expect((await classify(t, ["a good day"], bearer(key))).status).toBe(200);
    const [keyBefore, poolBefore] = [await remainingOf(t.deps.keys, id), await poolLeft()];
    const headers = { ...bearer(key), "Idempotency-Key": "refused-after-charge" };
    cutAt = "given-back";
    const refused = await classify(t, ["a good day"], headers);
    expect([refused.status, ((await refused.json()) as { error: { reason: string } }).error.reason]).toEqual([
      429,
      "RATE_LIMITED",
    ]);
    // The database is away before the claim's release lands (as if this process died now): what
    // a retry taking the claim over would find, read past the cut.
    const direct = new pg.Client({ connectionString: schema.url });
    await direct.connect();
    try {
      const claim = await direct.query("select charged from idempotency where key = $1", ["refused-after-charge"]);
      expect(claim.rows.map((r) => Number(r.charged))).toEqual([0]);
    } finally {
      await direct.end();
    }
    front.mode = "pass";
    expect([await remainingOf(t.deps.keys, id), await poolLeft()]).toEqual([keyBefore, poolBefore]);
  });

  it("cut in the job: the claim is released as soon as the database is back (no 409 until the lease ends); charged once", async () => {
    const { key, id } = await newKey(t30);
    const headers = { ...bearer(key), "Idempotency-Key": "cut-in-job" };
    cutAt = "job";
    const first = await classify(t30, ["a good day"], headers);
    expect(first.status).toBe(502);
    await new Promise((r) => setTimeout(r, 100));
    front.mode = "pass";
    // A retry at once: answered by its own job, not by a 409 while the cut claim's lease runs.
    const retry = await classify(t30, ["a good day"], headers);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
    // The cut call's use comes back as the database takes the refund (it may land after the retry's charge).
    expect(
      await until(
        () => remainingOf(t30.deps.keys, id),
        (n) => n === USES - 1,
        3000,
      ),
    ).toBe(USES - 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await remainingOf(t30.deps.keys, id)).toBe(USES - 1);
  });

  it("a failed job whose give-back never lands (its process died first): the retry taking the claim over is not charged again", async () => {
    const { key, id } = await newKey();
    const headers = { ...bearer(key), "Idempotency-Key": "lost-give-back" };
    lostRefunds.add(id);
    cutAt = "failing-job";
    expect((await classify(t, ["a good day"], headers)).status).toBe(502);
    await new Promise((r) => setTimeout(r, 700)); // the claim's lease has passed
    const retry = await classify(t, ["a good day"], headers);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, null]);
    await new Promise((r) => setTimeout(r, 300));
    // The failed call's use was never given back, and the claim still says so: it pays for the retry.
    expect(await remainingOf(t.deps.keys, id)).toBe(USES - 1);
  });

  it("a contact message whose sent mail could not be recorded: the retry replays it, nothing is mailed twice", async () => {
    const send = () =>
      t.app.request("/v1/mail/contact", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": "cut-after-mail" },
        body: JSON.stringify({ name: "Ada", email: "ada@example.test", message: "mailed once, whatever happens" }),
      });
    smtp.hold();
    const first = send();
    expect(
      await until(
        () => smtp.held,
        (n) => n === 1,
      ),
    ).toBe(1);
    cut(); // the mail server has the mail; its 250 comes after the database went away
    smtp.release();
    const answered = await first;
    expect([503, 200]).toContain(answered.status);
    await new Promise((r) => setTimeout(r, 100));
    front.mode = "pass";
    // Past the pending grace (twice MAIL_TIMEOUT_MS): a message still `pending` now would be sent again.
    await new Promise((r) => setTimeout(r, 3200));
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ status: "sent" });
    expect((await createContactOutbox(t.deps).runOnce()).sent).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.messages.filter((m) => m.text.includes("mailed once, whatever happens"))).toHaveLength(1);
  });

  it("a sign-in code asked for while the database is away: 503 with Retry-After, not better-auth's 500", async () => {
    const ask = () =>
      t.app.request("/api/auth/email-otp/send-verification-otp", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: PUBLIC_URL },
        body: JSON.stringify({ email: "grace@example.test", type: "sign-in" }),
      });
    expect((await ask()).status).toBe(200); // better-auth loaded, its tables there
    cut();
    const refused = await ask();
    expect([refused.status, Number(refused.headers.get("retry-after")) > 0]).toEqual([503, true]);
    front.mode = "pass";
    expect((await ask()).status).toBe(200);
  });
});
