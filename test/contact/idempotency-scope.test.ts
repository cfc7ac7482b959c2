import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ContactStore } from "../../src/features/contact/store.js";
import { IDEMPOTENCY_MISMATCH } from "../../src/features/shared/idempotency-answers.js";
import { errorOf, type TestApp, testApp, withTwoInstances } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, REDIS_URL, skipReason, tempDir } from "../helpers/env.js";
import { type SmtpTestServer, startSmtpServer } from "../support/smtp-server.js";
import { ADA, DESK, SENDER, until } from "./setup.js";

/**
 * An Idempotency-Key belongs to its client, as the contact desk tells clients apart for its
 * hourly limit: the client address through the trusted proxy, an IPv6 client by its /64. Two
 * clients that happen to send the same key send two messages; one client's retries send one.
 */

const COPIES = 30;

let smtp: SmtpTestServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp.close());
beforeEach(() => {
  smtp.release();
  smtp.setMode("accept");
  smtp.messages.length = 0;
});

const env = (extra: Record<string, string | undefined> = {}) => ({
  MAIL_URL: smtp.url,
  MAIL_FROM: SENDER,
  CONTACT_TO: DESK,
  MAIL_TIMEOUT_MS: "5000",
  CONTACT_HOURLY_LIMIT: "1000000",
  CONTACT_DAILY_CAP: "10000000", // the Redis counters outlive a run
  TRUST_PROXY: "1",
  ...extra,
});

const post = (t: TestApp, from: string, key: string, body: object = ADA) =>
  t.app.request("/v1/mail/contact", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": from, "Idempotency-Key": key },
    body: JSON.stringify(body),
  });

const replayed = (r: Response) => r.headers.get("Idempotent-Replayed") === "true";
const idOf = async (r: Response) => ((await r.clone().json()) as { id: string }).id;
const mailsWith = (id: string) => smtp.messages.filter((m) => m.text.includes(id)).length;

/** The cases, over one or two instances (`apps`, taken in turn). */
function cases(run: (test: (apps: TestApp[]) => Promise<void>) => Promise<void>) {
  const at = (apps: TestApp[], i: number) => apps[i % apps.length] as TestApp;

  it("two clients sending the same key and body: two messages, two mails, neither replayed", async () => {
    await run(async (apps) => {
      const a = await post(at(apps, 0), "203.0.113.1", "1");
      const b = await post(at(apps, 1), "203.0.113.2", "1");
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([replayed(a), replayed(b)]).toEqual([false, false]);
      const [ida, idb] = [await idOf(a), await idOf(b)];
      expect(ida).not.toBe(idb);
      expect([mailsWith(ida), mailsWith(idb)]).toEqual([1, 1]);
    });
  });

  it("two clients sending the same key with different bodies: both sent, no 409", async () => {
    await run(async (apps) => {
      const a = await post(at(apps, 0), "203.0.113.3", "same-key", { ...ADA, message: "from the first" });
      const b = await post(at(apps, 1), "2001:db8:5:5::1", "same-key", { ...ADA, message: "from the second" });
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(smtp.messages.map((m) => m.text.includes("from the first") || m.text.includes("from the second"))).toEqual(
        [true, true],
      );
    });
  });

  it("one client (two addresses of one /64, two instances) retrying: one mail, the answer replayed", async () => {
    await run(async (apps) => {
      const first = await post(at(apps, 0), "2001:db8:7:7::1", "retry-1");
      const again = await post(at(apps, 1), "2001:db8:7:7::2", "retry-1");
      expect([first.status, again.status]).toEqual([200, 200]);
      expect([replayed(first), replayed(again)]).toEqual([false, true]);
      expect(await again.json()).toEqual(await first.json());
      expect(smtp.messages).toHaveLength(1);
    });
  });

  it("one client, the same key with another body → 409 conflict", async () => {
    await run(async (apps) => {
      expect((await post(at(apps, 0), "203.0.113.4", "k")).status).toBe(200);
      const other = await post(at(apps, 1), "203.0.113.4", "k", { ...ADA, message: "changed my mind" });
      expect(other.status).toBe(409);
      expect((await errorOf(other)).error).toMatchObject({ code: "conflict", message: IDEMPOTENCY_MISMATCH });
      expect(smtp.messages).toHaveLength(1);
    });
  });

  it("a client address of 3,000 characters (as a proxy trusted too far may pass on) keys like any other", async () => {
    await run(async (apps) => {
      const address = randomBytes(3000).toString("base64url").slice(0, 3000);
      const first = await post(at(apps, 0), address, "long");
      const again = await post(at(apps, 1), address, "long");
      expect([first.status, again.status]).toEqual([200, 200]);
      expect([replayed(first), replayed(again)]).toEqual([false, true]);
      expect(smtp.messages).toHaveLength(1);
    });
  });

  it(`one client, ${COPIES} copies at once while the mail server holds its answer: one mail, ${COPIES - 1} replays`, async () => {
    await run(async (apps) => {
      smtp.hold();
      const pending = Array.from({ length: COPIES }, (_, i) => post(at(apps, i), "203.0.113.5", "burst"));
      await until(() => smtp.held > 0);
      await new Promise((r) => setTimeout(r, 300)); // let every copy reach its claim
      smtp.release();
      const answers = await Promise.all(pending);
      expect(answers.map((r) => r.status)).toEqual(Array(COPIES).fill(200));
      expect(answers.filter((r) => !replayed(r))).toHaveLength(1);
      expect(new Set(await Promise.all(answers.map((r) => r.text()))).size).toBe(1);
      expect(smtp.messages).toHaveLength(1);
    });
  });

  it(`${COPIES} clients at once with one key: ${COPIES} mails`, async () => {
    await run(async (apps) => {
      smtp.hold();
      const pending = Array.from({ length: COPIES }, (_, i) => post(at(apps, i), `198.51.100.${i + 1}`, "1"));
      await until(() => smtp.held === COPIES);
      smtp.release();
      const answers = await Promise.all(pending);
      expect(answers.map((r) => [r.status, replayed(r)])).toEqual(Array(COPIES).fill([200, false]));
      expect(new Set(await Promise.all(answers.map(idOf))).size).toBe(COPIES);
      expect(smtp.messages).toHaveLength(COPIES);
    });
  });
}

describe("contact Idempotency-Key, per client: SQLite", () => {
  cases(async (test) => {
    const t = await testApp(env());
    try {
      await test([t]);
    } finally {
      await t.close();
    }
  });
});

describe("contact Idempotency-Key, per client: SQLite, two instances on one data directory", () => {
  cases(async (test) => {
    const DATA_DIR = tempDir();
    const a = await testApp(env({ DATA_DIR }));
    const b = await testApp(env({ DATA_DIR }));
    try {
      await test([a, b]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe.skipIf(!DATABASE_URL || !REDIS_URL)(
  `contact Idempotency-Key, per client: two instances on PostgreSQL + Redis ${skipReason({ postgres: true, redis: true }) ?? ""}`,
  () => {
    cases((test) => withTwoInstances(env({ REDIS_URL }), test));
  },
);

describe("contact Idempotency-Key: messages stored before keys were per client", () => {
  it("are their address's: replayed for its /64 (409 for another body), another client sends its own", async () => {
    const t = await testApp(env());
    try {
      // As the desk stored them before: no client_key, only the address.
      const legacy = await new ContactStore(t.deps.database.db).create({
        ...ADA,
        clientIp: "2001:db8:3:3::1",
        idempotencyKey: "old",
      });
      expect(legacy.client_key).toBeNull();
      await t.deps.database.db
        .updateTable("contact_messages")
        .set({ status: "sent" })
        .where("id", "=", legacy.id)
        .execute();
      const replay = await post(t, "2001:db8:3:3::99", "old");
      expect([replay.status, replayed(replay), await idOf(replay)]).toEqual([200, true, legacy.id]);
      const other = await post(t, "2001:db8:3:3::99", "old", { ...ADA, message: "another" });
      expect(other.status).toBe(409);
      const stranger = await post(t, "2001:db8:4:4::1", "old");
      expect([stranger.status, replayed(stranger)]).toEqual([200, false]);
      expect(await idOf(stranger)).not.toBe(legacy.id);
      expect(smtp.messages).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});

/**
 * A request that outlives its claim's lease (its event loop stalled, its renewals not landing)
 * right between finding no message under its key and storing its own, while a retry takes the
 * claim over and sends the message: the late request stores nothing and mails nothing (409).
 */
describe("a holder that outlives its lease before storing its message: one message, one mail", () => {
  it.each(["SQLite", ...(DATABASE_URL ? ["PostgreSQL"] : [])])("%s", async (db) => {
    const schema = db === "PostgreSQL" ? await freshPostgresUrl() : undefined;
    let stall: Promise<void> | undefined;
    let resume = () => {};
    const t = await testApp(
      env({ IDEMPOTENCY_LEASE_MS: "300", ...(schema && { DATABASE_URL: schema.url }) }),
      (built) => ({
        idempotency: new Proxy(built.idempotency, {
          get: (target, prop) =>
            prop === "renew" ? async () => true : (Reflect.get(target, prop) as () => unknown).bind(target),
        }),
        limiter: new Proxy(built.limiter, {
          get: (target, prop) => {
            const real = (Reflect.get(target, prop) as (...a: unknown[]) => unknown).bind(target);
            if (prop !== "consume") return real;
            return async (...args: unknown[]) => {
              // The first request's spend of the desk's limits, just before it stores its message.
              if (stall === undefined && (args[0] as { name: string }).name === "contact") {
                stall = new Promise<void>((r) => {
                  resume = r;
                });
                await stall;
              }
              return real(...args);
            };
          },
        }),
      }),
    );
    try {
      const late = post(t, "203.0.113.9", "stalled");
      await until(() => stall !== undefined);
      await new Promise((r) => setTimeout(r, 450)); // past the lease
      const retry = await post(t, "203.0.113.9", "stalled");
      expect([retry.status, replayed(retry)]).toEqual([200, false]);
      resume();
      const answered = await late;
      expect([answered.status, Number(answered.headers.get("retry-after")) > 0]).toEqual([409, true]);
      const again = await post(t, "203.0.113.9", "stalled");
      expect([again.status, replayed(again), await idOf(again)]).toEqual([200, true, await idOf(retry)]);
      const stored = await t.deps.database.db.selectFrom("contact_messages").select("id").execute();
      expect(stored).toHaveLength(1);
      expect(smtp.messages).toHaveLength(1);
    } finally {
      resume();
      await t.close();
      await schema?.drop();
    }
  });
});
