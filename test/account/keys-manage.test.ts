import { describe, expect, it } from "vitest";
import type { FormAgent } from "../support/form-agent.js";
import { type AccountApp, accountApp, accountPage } from "./support.js";

const PUBLIC_URL = "http://localhost:8080";

const idsOf = (html: string, action: string) =>
  [...html.matchAll(new RegExp(`href="/account/keys/([^/"]+)/${action}"`, "g"))].map((m) => m[1] ?? "");

/** Creates a key on the page; returns its id (the newest key of the account). */
async function createKey(acct: AccountApp, agent: FormAgent, name: string, expires = "never") {
  const { csrf } = await accountPage(agent);
  expect((await agent.post("/account/keys", { csrf, name, expires })).status).toBe(303);
  return (await acct.t.deps.keys.list(undefined)).find((k) => k.name === name)?.id ?? "";
}

/** The fields a form on `html` would send, as a browser reads them (inputs, selected options, ticked boxes). */
function formFields(html: string): Record<string, string> {
  const form: Record<string, string> = {};
  for (const m of html.matchAll(/<input([^>]*)>/g)) {
    const attrs = m[1] ?? "";
    const name = /name="([^"]+)"/.exec(attrs)?.[1];
    if (!name || (/type="checkbox"/.test(attrs) && !/checked/.test(attrs))) continue;
    form[name] = /value="([^"]*)"/.exec(attrs)?.[1] ?? "";
  }
  for (const m of html.matchAll(/<select[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    form[m[1] ?? ""] = /<option value="([^"]*)" selected/.exec(m[2] ?? "")?.[1] ?? "";
  }
  return form;
}

/** Managing keys on the account page, over HTTP. */
describe("account page: managing keys", () => {
  const acct = accountApp(PUBLIC_URL);

  it("edits a key on its own page: the form shows today's settings and saving it as shown changes nothing", async () => {
    const agent = await acct.signIn("edit@example.test");
    const id = await createKey(acct, agent, "first name", "30d");
    const before = (await acct.t.deps.keys.list(undefined)).find((k) => k.id === id);
    expect(idsOf((await accountPage(agent)).html, "edit")).toEqual([id]);
    const page = await agent.get(`/account/keys/${id}/edit`);
    expect(page.status).toBe(200);
    const fields = formFields(await page.text());
    expect(fields).toMatchObject({ name: "first name", expires: "keep", remaining: "unlimited", ratelimit: "none" });
    expect(fields.permission).toBe("vibe.classify");
    expect((await agent.post(`/account/keys/${id}/update`, fields)).headers.get("location")).toBe(
      "/account?notice=updated",
    );
    expect((await acct.t.deps.keys.list(undefined)).find((k) => k.id === id)).toEqual(before);

    // Renamed, its own limits set, classify taken away, a new expiry.
    const { permission: _, ...unticked } = fields;
    const changed = { ...unticked, name: "renamed", remaining: "40", ratelimit: "5/60", expires: "7d" };
    expect((await agent.post(`/account/keys/${id}/update`, changed)).status).toBe(303);
    const after = (await acct.t.deps.keys.list(undefined)).find((k) => k.id === id);
    expect(after).toMatchObject({ name: "renamed", remaining: 40, ratelimit: { limit: 5, durationSec: 60 } });
    expect(after?.permissions).toEqual([]);
    const week = Date.parse(after?.expiresAt ?? "") - Date.now();
    expect(week).toBeGreaterThan(6.9 * 86_400_000);
    expect(week).toBeLessThanOrEqual(7 * 86_400_000);
  });

  it("a revoked key is not edited: its edit page and its form both answer 404, nothing is written", async () => {
    const agent = await acct.signIn("edit-revoked@example.test");
    const id = await createKey(acct, agent, "gone soon");
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${id}/revoke`, { csrf })).status).toBe(303);
    const before = (await acct.t.deps.keys.list(undefined)).find((k) => k.id === id);
    expect((await agent.get(`/account/keys/${id}/edit`)).status).toBe(404);
    const edit = await agent.post(`/account/keys/${id}/update`, { csrf, name: "revived", expires: "30d" });
    expect(edit.status).toBe(404);
    expect((await acct.t.deps.keys.list(undefined)).find((k) => k.id === id)).toEqual(before);
  });

  it("hides revoked keys behind “show all”", async () => {
    const agent = await acct.signIn("show-all@example.test");
    const gone = await createKey(acct, agent, "retired key");
    await createKey(acct, agent, "live key");
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${gone}/revoke`, { csrf })).status).toBe(303);
    const page = (await accountPage(agent)).html;
    expect(page).toContain("live key");
    expect(page).not.toContain("retired key");
    expect(page).toContain(
      '<a href="/account?all=1#keys-title">Show all keys (1 revoked or expired key is hidden)</a>',
    );
    const all = await (await agent.get("/account?all=1")).text();
    expect(all).toContain("retired key");
    expect(all).toContain("Hide revoked and expired keys");
  });

  it("a key in a roll offers no roll form: the old key names its replacement, the new one waits for the old", async () => {
    const agent = await acct.signIn("rolled-twice@example.test");
    const old = await createKey(acct, agent, "rolling");
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${old}/roll`, { csrf, grace: "3600" })).status).toBe(303);
    const fresh = (await acct.t.deps.keys.list(undefined)).find((k) => k.replaces === old);
    const short = `${fresh?.prefix}…${fresh?.last4}`;
    const page = (await accountPage(agent)).html;
    expect(idsOf(page, "roll")).toEqual([]);
    expect(idsOf(page, "revoke").sort()).toEqual([old, fresh?.id].sort());
    const oldRoll = await (await agent.get(`/account/keys/${old}/roll`)).text();
    expect(oldRoll).not.toContain('name="grace"');
    expect(oldRoll).toContain(`This key was already rolled: its replacement is ${short}`);
    const freshRoll = await (await agent.get(`/account/keys/${fresh?.id}/roll`)).text();
    expect(freshRoll).not.toContain('name="grace"');
    expect(freshRoll).toContain("This key replaced");
  });

  it("a notice is said once: a reload of /account?notice=created, or a link to it, shows none", async () => {
    const agent = await acct.signIn("notice-once@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name: "noticed" });
    expect(res.headers.get("location")).toBe("/account?notice=created");
    expect(await (await agent.follow(res, "/account/keys")).res.text()).toContain("The key was created.");
    expect(await (await agent.get("/account?notice=created")).text()).not.toContain("The key was created.");
    expect(await (await agent.get("/account?notice=revoked")).text()).not.toContain("The key was revoked.");
  });

  it("a key without the classify permission is offered a lookup curl, not a classify call that answers 403", async () => {
    const agent = await acct.signIn("no-classify@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name: "lookups", permissions_offered: "1" });
    const html = await (await agent.follow(res, "/account/keys")).res.text();
    const curl = /<code id="new-key-curl">([^<]+)<\/code>/.exec(html)?.[1] ?? "";
    expect(curl).toMatch(/^curl http:\/\/localhost:8080\/v1\/moon -H (&quot;|")Authorization: Bearer alm_/);
    expect(curl).not.toContain("classify");
  });

  it("each key's row has a 30-day chart of its calls per day, as SVG with a title that says it in words", async () => {
    const agent = await acct.signIn("chart@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name: "charted" });
    const key = /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(
      await (await agent.follow(res, "/account/keys")).res.text(),
    )?.[1];
    for (let i = 0; i < 3; i++) {
      const call = await acct.t.app.request("/v1/moon", { headers: { Authorization: `Bearer ${key}` } });
      expect(call.status).toBe(200);
    }
    const html = (await accountPage(agent)).html;
    const svg = /<svg class="chart" role="img" aria-labelledby="([^"]+)"[\s\S]*?<\/svg>/.exec(html);
    const today = new Date().toISOString().slice(0, 10);
    expect(svg?.[0]).toContain(`<title id="${svg?.[1]}">Calls per day from `);
    expect(svg?.[0]).toContain(`to ${today}: 3 in all, at most 3 on ${today}.</title>`);
    const bars = [...(svg?.[0] ?? "").matchAll(/<rect [^>]*height="(\d+)"/g)].map((m) => Number(m[1]));
    expect(bars).toHaveLength(30);
    expect(bars.at(-1)).toBe(60); // today, the busiest day, full height
    expect(bars.slice(0, -1).every((h) => h === 0)).toBe(true);
    // Under it, its first and last day in words.
    const day = (iso: string) =>
      new Date(`${iso}T00:00:00Z`).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
    const first = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    expect(html).toContain(
      `<p class="chart-axis muted" aria-hidden="true"><span>${day(first)}</span><span>${day(today)}</span></p>`,
    );
    expect(svg?.[0]).toContain('width="240" height="61"');
  });

  it("the chart draws refused calls beside allowed ones: a 403 for a missing permission", async () => {
    const agent = await acct.signIn("chart-refused@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name: "lookups only", permissions_offered: "1" });
    const key = /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(
      await (await agent.follow(res, "/account/keys")).res.text(),
    )?.[1];
    const auth = { Authorization: `Bearer ${key}` };
    expect((await acct.t.app.request("/v1/moon", { headers: auth })).status).toBe(200);
    expect((await acct.t.app.request("/v1/moon", { headers: auth })).status).toBe(200);
    const refused = await acct.t.app.request("/v1/vibe/classify", {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ texts: ["a fine day"] }),
    });
    expect(refused.status).toBe(403);
    const html = (await accountPage(agent)).html;
    const svg = /<svg class="chart" role="img" aria-labelledby="([^"]+)"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? "";
    const today = new Date().toISOString().slice(0, 10);
    expect(svg).toContain(`to ${today}: 2 allowed and 1 refused in all, at most 3 on ${today}.</title>`);
    expect(svg).toContain(`<title>${today}: 2 allowed, 1 refused</title>`);
    const refusedBars = [...svg.matchAll(/<rect class="refused" [^>]*height="(\d+)"/g)].map((m) => Number(m[1]));
    expect(refusedBars.at(-1)).toBe(20); // a third of the busiest day's 60 px
    expect(html).toContain("refused</span>"); // the legend says which is which in words
  });

  it("GET /v1/usage names the key, its expiry, its permissions and its plan", async () => {
    const agent = await acct.signIn("usage-fields@example.test");
    const { csrf } = await accountPage(agent);
    const res = await agent.post("/account/keys", { csrf, name: "reporter", expires: "30d", permissions_offered: "1" });
    const key = /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(
      await (await agent.follow(res, "/account/keys")).res.text(),
    )?.[1];
    const info = (await acct.t.deps.keys.list(undefined)).find((k) => k.name === "reporter");
    const usage = await acct.t.app.request("/v1/usage", { headers: { Authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({
      key_id: info?.id,
      name: "reporter",
      expires_at: info?.expiresAt,
      permissions: [],
      plan: "free",
    });
    expect(info?.expiresAt).toMatch(/^\d{4}-/);
  });
});

describe("account page: key page details", () => {
  const acct = accountApp(PUBLIC_URL);

  it("a refused edit comes back as the form with what was typed and a plain message", async () => {
    const agent = await acct.signIn("edit-error@example.test");
    const id = await createKey(acct, agent, "typo key");
    const fields = formFields(await (await agent.get(`/account/keys/${id}/edit`)).text());
    const res = await agent.post(`/account/keys/${id}/update`, { ...fields, name: "typo key 2", remaining: "abc" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<form method="post" action="/account/keys/');
    expect(html).toContain("Remaining uses are a whole number, or “unlimited”.");
    expect(html).not.toContain("`");
    expect(formFields(html)).toMatchObject({ name: "typo key 2", remaining: "abc" });
    expect((await acct.t.deps.keys.list(undefined)).find((k) => k.id === id)?.name).toBe("typo key");
  });

  it("the roll dialog keeps the old key working for a grace period unless told otherwise", async () => {
    const agent = await acct.signIn("roll-default@example.test");
    const id = await createKey(acct, agent, "rotated");
    const fields = formFields(await (await agent.get(`/account/keys/${id}/roll`)).text());
    expect(fields.grace).toBe("86400");
  });

  it("after revoking only the new key of a rolled pair, the old key points at nothing revoked and offers no roll", async () => {
    const agent = await acct.signIn("half-pair@example.test");
    const old = await createKey(acct, agent, "pair");
    let { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${old}/roll`, { csrf, grace: "3600" })).status).toBe(303);
    const fresh = (await acct.t.deps.keys.list(undefined)).find((k) => k.replaces === old)?.id ?? "";
    ({ csrf } = await accountPage(agent));
    expect((await agent.post(`/account/keys/${fresh}/revoke`, { csrf, only: "1" })).status).toBe(303);
    const { html } = await accountPage(agent);
    expect(html).toContain("its replacement was revoked");
    expect(html).not.toContain("→");
    expect(idsOf(html, "roll")).not.toContain(old);
  });

  it("the two keys of a roll (one name) have link labels told apart by their short key", async () => {
    const agent = await acct.signIn("twins@example.test");
    const old = await createKey(acct, agent, "prod server");
    const { csrf } = await accountPage(agent);
    expect((await agent.post(`/account/keys/${old}/roll`, { csrf, grace: "3600" })).status).toBe(303);
    const { html } = await accountPage(agent);
    const labels = [...html.matchAll(/aria-label="(Revoke key [^"]+)"/g)].map((m) => m[1]);
    expect(labels).toHaveLength(2);
    expect(new Set(labels).size).toBe(2);
    for (const l of labels) expect(l).toMatch(/^Revoke key prod server \(alm_.*….+\)$/);
  });

  it("every page starts with a skip link to its content", async () => {
    const agent = await acct.signIn("skip@example.test");
    const { html } = await accountPage(agent);
    expect(html).toMatch(/<body><a href="#main" class="skip">Skip to content<\/a>/);
    expect(html).toContain('<main id="main">');
  });
});
