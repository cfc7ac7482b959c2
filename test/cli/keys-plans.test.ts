import { describe, expect, it } from "vitest";
import type { CreatedKey, KeyInfo } from "../../src/ports/key-store.js";
import { accountApp, accountPage } from "../account/support.js";
import { runCli } from "../helpers/cli.js";
import { bearer, classify } from "../helpers/key-stores.js";

const PUBLIC_URL = "http://localhost:8080";
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1] ?? "";

describe("almanac keys update / revoke / roll and plans grant", () => {
  const acct = accountApp(PUBLIC_URL);
  const almanac = async (...args: string[]) => {
    const { code, stdout, stderr } = await runCli(args, { LOG_LEVEL: "silent", DATA_DIR: acct.t.config.DATA_DIR });
    return { code, json: code === 0 ? (JSON.parse(stdout) as unknown) : null, stderr };
  };

  it("update changes an operator key; revoke takes the other key of a roll too, unless --only; list shows old → new", async () => {
    const made = (await almanac("keys", "create", "--name", "ops", "--remaining", "9")).json as CreatedKey;
    const upd = await almanac(
      "keys",
      "update",
      made.id,
      "--name",
      "ops2",
      "--remaining",
      "unlimited",
      "--ratelimit",
      "5/60",
      "--expires",
      "2099-01-01T00:00:00Z",
    );
    expect(upd.code).toBe(0);
    expect(upd.json).toMatchObject({
      id: made.id,
      name: "ops2",
      remaining: null,
      ratelimit: { limit: 5, durationSec: 60 },
      expiresAt: "2099-01-01T00:00:00.000Z",
    });
    const rolled = (await almanac("keys", "roll", made.id, "--grace", "3600")).json as CreatedKey;
    const listed = (await almanac("keys", "list")).json as (KeyInfo & { replacedBy: string | null })[];
    expect(listed.find((k) => k.id === made.id)).toMatchObject({ replacedBy: rolled.id });
    expect(listed.find((k) => k.id === rolled.id)).toMatchObject({
      replaces: made.id,
      expiresAt: "2099-01-01T00:00:00.000Z",
    });

    expect((await almanac("keys", "revoke", rolled.id)).json).toEqual({
      id: rolled.id,
      revoked: true,
      alsoRevoked: [made.id],
    });
    expect((await classify(acct.t, ["good"], bearer(made.key))).status).toBe(401);

    const b = (await almanac("keys", "create", "--name", "b")).json as CreatedKey;
    const b2 = (await almanac("keys", "roll", b.id, "--grace", "3600")).json as CreatedKey;
    expect((await almanac("keys", "revoke", b.id, "--only")).json).toEqual({ id: b.id, revoked: true });
    expect((await classify(acct.t, ["good"], bearer(b2.key))).status).toBe(200);
  });

  it("a rolled operator key ends with its grace period: its expiry stays, its limits stay shared with the replacement", async () => {
    const made = (await almanac("keys", "create", "--name", "op-roll", "--owner", "someone", "--remaining", "9"))
      .json as CreatedKey;
    const rolled = (await almanac("keys", "roll", made.id, "--grace", "3600")).json as CreatedKey;
    const graceEnd = ((await almanac("keys", "list")).json as KeyInfo[]).find((k) => k.id === made.id)?.expiresAt;
    expect(graceEnd).not.toBeNull();

    for (const expires of ["never", "2099-01-01T00:00:00Z"]) {
      const later = await almanac("keys", "update", made.id, "--expires", expires);
      expect(later.code).toBe(1);
      expect(later.stderr).toBe(
        "almanac: This key was rolled and ends with its grace period: its expiry cannot change. Revoke it, or edit its replacement.\n",
      );
    }
    expect(await almanac("keys", "update", made.id, "--remaining", "3")).toMatchObject({ code: 0 });
    expect(await almanac("keys", "update", rolled.id, "--expires", "never")).toMatchObject({ code: 0 });
    const listed = (await almanac("keys", "list")).json as KeyInfo[];
    expect(listed.find((k) => k.id === made.id)).toMatchObject({ expiresAt: graceEnd, remaining: 3, status: "active" });
    expect(listed.find((k) => k.id === rolled.id)).toMatchObject({ expiresAt: null, remaining: 3 });
  });

  it("an account key stays within its plan; a downgrade says what it did", async () => {
    const email = "cli-plan@example.test";
    const agent = await acct.signIn(email);
    expect((await almanac("plans", "grant", email, "pro")).code).toBe(0);
    const ids: string[] = [];
    for (const name of ["one", "two", "three"]) {
      const { csrf } = await accountPage(agent);
      const res = await agent.post("/account/keys", { csrf, name });
      newKeyOf(await (await agent.follow(res, "/account/keys")).res.text());
      ids.push((await acct.t.deps.keys.list(undefined)).find((k) => k.name === name)?.id ?? "");
    }
    const beyond = await almanac("keys", "update", ids[0] ?? "", "--remaining", "200000");
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toContain("The pro plan allows 100000 uses: choose less, or upgrade your plan.");

    const down = await almanac("plans", "grant", email, "free");
    expect(down.code).toBe(0);
    expect(down.json).toMatchObject({
      plan: "free",
      previousPlan: "pro",
      usesLeft: 100,
      revokedKeys: [{ id: ids[2], name: "three" }],
      message:
        "The account moved from pro to free: at most 100 uses, 10 calls per 60 s, 2 active keys. 1 key was over the free plan's cap and revoked, newest first.",
    });
  });
});
