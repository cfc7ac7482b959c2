import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl, skipReason } from "../helpers/env.js";
import { accountApp, accountPage, authSweep, requestCode } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";
const MINUTE = 60_000;

for (const pg of [false, true]) {
  describe.skipIf(pg && !DATABASE_URL)(
    `expired sign-in rows are swept on ${pg ? `PostgreSQL ${skipReason({ postgres: true }) ?? ""}` : "SQLite"}`,
    () => {
      // GitHub configured, so a sign-in with it leaves an OAuth state row (its endpoint is never reached here).
      const acct = accountApp(PUBLIC_URL, {
        postgres: pg,
        env: () => ({ GITHUB_CLIENT_ID: "sweep-client", GITHUB_CLIENT_SECRET: "sweep-secret" }),
      });
      const db = () => acct.t.deps.database.db;
      const sweep = () => authSweep(acct.t.deps);
      const identifiers = async () =>
        (await sql<{ identifier: string }>`select identifier from auth_verification`.execute(db())).rows
          .map((r) => r.identifier)
          .sort();
      /** Moves a row's expiry `ms` before now, as if it had been left that long ago. */
      const age = (table: "auth_verification" | "auth_session", where: ReturnType<typeof sql>, ms = MINUTE) =>
        sql`update ${sql.table(table)} set "expiresAt" = ${new Date(Date.now() - ms).toISOString()} where ${where}`.execute(
          db(),
        );
      const startGitHub = async () => {
        const res = await acct.agent().post("/account/sign-in-with/github", {});
        expect(res.status).toBe(303);
        return `auth-state:${new URL(res.headers.get("location") as string).searchParams.get("state")}`;
      };

      it("deletes OAuth states, codes and sessions past their expiry and keeps the rest", async () => {
        const keep = await acct.signIn("kept@example.test");
        const gone = await acct.signIn("gone@example.test");
        await requestCode(acct.agent(), acct.smtp, "old-code@example.test");
        await requestCode(acct.agent(), acct.smtp, "new-code@example.test");
        const [oldState, newState] = [await startGitHub(), await startGitHub()];
        await age("auth_verification", sql`identifier in (${oldState}, ${"sign-in-otp-old-code@example.test"})`);
        await age(
          "auth_session",
          sql`"userId" = (select id from auth_user where email = ${"gone@example.test"})`,
          // Long gone: past better-auth's own refresh window too.
          8 * 24 * 60 * MINUTE,
        );

        expect(await sweep().runOnce()).toEqual({ verifications: 2, sessions: 1 });
        expect(await identifiers()).toEqual([newState, "sign-in-otp-new-code@example.test"].sort());
        expect(await sweep().runOnce()).toEqual({ verifications: 0, sessions: 0 }); // idempotent
        expect((await accountPage(keep)).html).toContain("kept@example.test");
        expect(await (await gone.get("/account")).text()).not.toContain("gone@example.test");
      });

      it("a sign-in by code completes while instances sweep at once; each expired row goes once", async () => {
        const agent = acct.agent();
        const code = await requestCode(agent, acct.smtp, "mid-sweep@example.test");
        const left = [await startGitHub(), await startGitHub(), await startGitHub()];
        await age("auth_verification", sql`identifier in (${sql.join(left)})`);
        const sweeps = Promise.all([sweep().runOnce(), sweep().runOnce(), sweep().runOnce()]);
        const verified = await agent.post("/account/verify", { email: "mid-sweep@example.test", code });
        const runs = await sweeps;
        expect(verified.status).toBe(303);
        expect(verified.headers.getSetCookie().some((c) => c.startsWith("almanac.session_token="))).toBe(true);
        expect((await accountPage(agent)).html).toContain("mid-sweep@example.test");
        expect(runs.reduce((n, r) => n + (r.verifications ?? 0), 0)).toBe(3);
        expect(await identifiers()).not.toContain(left[0]);
      });
    },
  );
}

describe("before better-auth has made its tables", () => {
  it.each([false, true])("a sweep finds nothing to do (PostgreSQL: %s)", async (pg) => {
    if (pg && !DATABASE_URL) return;
    const schema = pg ? await freshPostgresUrl() : undefined;
    const t = await testApp(schema ? { DATABASE_URL: schema.url } : {});
    try {
      expect(await authSweep(t.deps).runOnce()).toEqual({ verifications: 0, sessions: 0 });
    } finally {
      await t.close();
      await schema?.drop();
    }
  });
});
