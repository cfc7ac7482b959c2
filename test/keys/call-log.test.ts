import pino from "pino";
import { describe, expect, it } from "vitest";
import { ExpiredRowsSweep } from "../../src/db/expired-rows.js";
import { ACTIVITY_EXPIRIES, ActivityLog, CALL_LOG_LIMIT } from "../../src/features/keys/index.js";
import { accountApp, accountPage } from "../account/support.js";
import { type TestApp, testApp } from "../helpers/app.js";
import { DATABASE_URL, freshPostgresUrl } from "../helpers/env.js";
import type { FormAgent } from "../support/form-agent.js";

const PUBLIC_URL = "http://localhost:8080";
const newKeyOf = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1] ?? "";
const rows = (html: string, table: string) =>
  (new RegExp(`<table class="${table}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? "").split("<tr").slice(2);
const text = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

async function createKey(agent: FormAgent, name: string): Promise<string> {
  const { csrf } = await accountPage(agent);
  const res = await agent.post("/account/keys", { csrf, name, permission: "vibe.classify" });
  return newKeyOf(await (await agent.follow(res, "/account/keys")).res.text());
}

describe("the call log and the audit log on /account/activity", () => {
  const acct = accountApp(PUBLIC_URL);
  const call = (path: string, key: string, init: RequestInit = {}) =>
    acct.t.app.request(path, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });

  it("lists each keyed call with time, key, method and path, status, error code and request id; filters by key and status", async () => {
    const agent = await acct.signIn("calls@example.test");
    const a = await createKey(agent, "server a");
    const b = await createKey(agent, "server b");
    const classify = (key: string, body: string) =>
      call("/v1/vibe/classify", key, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    const ok = await classify(a, '["lovely"]');
    expect(ok.status).toBe(200);
    const bad = await classify(a, "[]");
    expect(bad.status).toBe(400);
    const get = await call("/v1/moon?date=2024-01-25", b);
    expect(get.status).toBe(200);
    // A call with someone else's or no key is not in this account's log.
    expect((await call("/v1/vibe/classify", "alm_notakey", { method: "POST", body: "[]" })).status).toBe(401);

    const page = await (await agent.get("/account/activity")).text();
    const all = rows(page, "calls");
    expect(all).toHaveLength(3);
    // Newest first.
    expect(text(all[0] ?? "")).toMatch(/server b .*GET \/v1\/moon 200/);
    expect(text(all[1] ?? "")).toMatch(/server a .*POST \/v1\/vibe\/classify 400 invalid_body/);
    expect(all[1]).toContain(bad.headers.get("x-request-id") ?? "missing");
    expect(all[2]).toContain(ok.headers.get("x-request-id") ?? "missing");
    expect(all[2]).toContain('data-copy="rid-2"');

    const only4xx = rows(await (await agent.get("/account/activity?status=4xx")).text(), "calls");
    expect(only4xx).toHaveLength(1);
    expect(only4xx[0]).toContain('data-status="400"');
    const keyIdOf = (name: string) => new RegExp(`<option value="([^"]+)"[^>]*>${name} `).exec(page)?.[1] ?? "";
    const onlyB = rows(await (await agent.get(`/account/activity?key=${keyIdOf("server b")}`)).text(), "calls");
    expect(onlyB).toHaveLength(1);
    expect(text(onlyB[0] ?? "")).toContain("GET /v1/moon");
  });

  it("lists key events: created, edited, rolled, revoked", async () => {
    const agent = await acct.signIn("audit@example.test");
    await createKey(agent, "audited");
    const { html, csrf } = await accountPage(agent);
    const id = /href="\/account\/keys\/([^/"]+)\/revoke"/.exec(html)?.[1] ?? "";
    expect((await agent.post(`/account/keys/${id}/update`, { csrf, name: "renamed" })).status).toBe(303);
    expect((await agent.post(`/account/keys/${id}/roll`, { csrf, grace: "0" })).status).toBe(303);
    const after = await accountPage(agent);
    const next = /href="\/account\/keys\/([^/"]+)\/revoke"/.exec(after.html)?.[1] ?? "";
    expect((await agent.post(`/account/keys/${next}/revoke`, { csrf: after.csrf })).status).toBe(303);
    const events = rows(await (await agent.get("/account/activity")).text(), "audit").map(
      (r) => /data-event="(\w+)"/.exec(r)?.[1],
    );
    expect(events).toEqual(expect.arrayContaining(["created", "edited", "rolled", "revoked"]));
    expect(events.at(-1)).toBe("created");
  });
});

async function boundedOn(t: TestApp) {
  const log = new ActivityLog(t.deps.database.db);
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  for (let i = 0; i < CALL_LOG_LIMIT + 5; i++) {
    log.recordCall({
      ownerId: "owner-bounded",
      keyId: "k",
      at: at(i),
      method: "GET",
      path: "/v1/moon",
      status: 200,
      errorCode: null,
      requestId: `r${i}`,
    });
  }
  await log.flush();
  const kept = await log.listCalls("owner-bounded", {}, 2000);
  expect(kept).toHaveLength(CALL_LOG_LIMIT);
  expect(kept.at(-1)?.requestId).toBe("r5");
  // Swept like the other expiring rows: 30 days.
  const sweep = new ExpiredRowsSweep(
    t.deps.database,
    pino({ level: "silent" }),
    () => new Date(at(0)),
    ACTIVITY_EXPIRIES,
  );
  expect((await sweep.runOnce()).call_log).toBe(0);
  const later = new ExpiredRowsSweep(
    t.deps.database,
    pino({ level: "silent" }),
    () => new Date(Date.parse(at(500)) + 30 * 86_400_000),
    ACTIVITY_EXPIRIES,
  );
  expect((await later.runOnce()).call_log).toBe(495);
  await log.close();
}

describe("bounded storage", () => {
  it(`SQLite: an account keeps its newest ${CALL_LOG_LIMIT} calls, and none older than 30 days`, async () => {
    const t = await testApp();
    try {
      await boundedOn(t);
    } finally {
      await t.close();
    }
  });

  it.skipIf(!DATABASE_URL)("PostgreSQL: the same", async () => {
    const pg = await freshPostgresUrl();
    const t = await testApp({ DATABASE_URL: pg.url });
    try {
      await boundedOn(t);
    } finally {
      await t.close();
      await pg.drop();
    }
  });
});
