import { describe, expect, it } from "vitest";
import { createExpiryReminders } from "../../src/features/keys/index.js";
import type { MailLane, OutgoingMail } from "../../src/ports/mail-lane.js";
import { accountApp, accountPage } from "../account/support.js";
import { DATABASE_URL, skipReason } from "../helpers/env.js";

const DAY = 86_400_000;

/** A mail lane that keeps what it is given (and can refuse). */
function keepingLane(refuse = false): MailLane & { sent: OutgoingMail[] } {
  const sent: OutgoingMail[] = [];
  return {
    sent,
    send: async (mail) => {
      if (refuse) return { ok: false, reason: "refused for the test" };
      sent.push(mail);
      return { ok: true, messageId: `<${sent.length}@test>` };
    },
    close: async () => undefined,
  };
}

for (const pg of [false, true]) {
  describe.skipIf(pg && !DATABASE_URL)(
    `a mail a week before a key expires on ${pg ? `PostgreSQL ${skipReason({ postgres: true }) ?? ""}` : "SQLite"}`,
    () => {
      const acct = accountApp("http://localhost:8080", { postgres: pg });

      it("is claimed first, so two instances passing at once send it once; a refused send is retried", async () => {
        const agent = await acct.signIn("expiring@example.test");
        const { csrf } = await accountPage(agent);
        await agent.post("/account/keys", { csrf, name: "expiring", expires: "30d" });
        await agent.post("/account/keys", { csrf: (await accountPage(agent)).csrf, name: "forever", expires: "never" });
        const deps = acct.t.deps;
        let now = new Date();
        const make = (lane: MailLane) => createExpiryReminders({ ...deps, mail: lane, now: () => now });

        const early = keepingLane();
        expect((await make(early).runOnce()).sent).toBe(0); // 30 days ahead: not yet
        now = new Date(Date.now() + 24 * DAY); // 6 days before it expires

        const refusing = keepingLane(true);
        expect(await make(refusing).runOnce()).toMatchObject({ sent: 0, failed: 1 });

        const a = keepingLane();
        const b = keepingLane();
        const [ra, rb] = await Promise.all([make(a).runOnce(), make(b).runOnce()]);
        expect(ra.sent + rb.sent).toBe(1);
        const mail = [...a.sent, ...b.sent][0];
        expect(mail?.to).toBe("expiring@example.test");
        expect(mail?.subject).toMatch(/^Your Almanac API key expires on \d{4}-\d{2}-\d{2}$/);
        expect(mail?.text).toContain("expiring");
        expect(mail?.text).toMatch(/http:\/\/localhost:8080\/account\/keys\/[^/\s]+\/edit/);
        expect(mail?.text).not.toContain("forever");

        const again = keepingLane();
        expect((await make(again).runOnce()).sent).toBe(0); // once per key and expiry
      });
    },
  );
}
