import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/types.js";
import type { AuditEntry, CallEntry, KeyOverview } from "../keys/index.js";
import { CALL_LOG_LIMIT } from "../keys/index.js";
import type { AccountContext } from "./context.js";
import { authHeaders } from "./http.js";
import { Layout } from "./layout.jsx";

const STATUS_CHOICES = ["", "2xx", "4xx", "5xx", "401", "403", "429"];
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

interface ActivityView {
  keys: KeyOverview[];
  calls: CallEntry[];
  audit: AuditEntry[];
  filter: { key: string; status: string };
}

function keyLabel(keys: Map<string, KeyOverview>, id: string | null) {
  const k = id ? keys.get(id) : undefined;
  if (!k) return id ? <code>{id}</code> : "—";
  return (
    <>
      {k.name} <code>{`${k.prefix}…${k.last4}`}</code>
    </>
  );
}

function ActivityPage(v: ActivityView) {
  const byId = new Map(v.keys.map((k) => [k.id, k]));
  return (
    <Layout title="Calls and key events">
      <h1>Calls and key events</h1>
      <p>
        <a href="/account">Back to your account</a>
      </p>
      <section aria-labelledby="calls-title">
        <h2 id="calls-title">Recent calls</h2>
        <p class="hint">
          The last {CALL_LOG_LIMIT.toLocaleString("en")} calls made with your keys, kept 30 days; newest first, at most
          200 shown. A call appears within a few seconds.
        </p>
        <form method="get" action="/account/activity" class="inline filters">
          <label for="key">Key</label>
          <select id="key" name="key">
            <option value="">All keys</option>
            {v.keys.map((k) => (
              <option value={k.id} selected={v.filter.key === k.id}>
                {k.name} ({k.prefix}…{k.last4})
              </option>
            ))}
          </select>
          <label for="status">Status</label>
          <select id="status" name="status">
            {STATUS_CHOICES.map((s) => (
              <option value={s} selected={v.filter.status === s}>
                {s === "" ? "Any" : s}
              </option>
            ))}
          </select>
          <button type="submit">Filter</button>
        </form>
        {v.calls.length === 0 ? (
          <p>No calls{v.filter.key || v.filter.status ? " match" : " yet"}.</p>
        ) : (
          <table class="calls">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Key</th>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col">Error</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {v.calls.map((call, i) => (
                <tr data-status={call.status}>
                  <td>
                    <time datetime={call.at}>{utc(call.at)}</time>
                  </td>
                  <td>{keyLabel(byId, call.keyId)}</td>
                  <td>
                    <code>
                      {call.method} {call.path}
                    </code>
                  </td>
                  <td>{call.status}</td>
                  <td>{call.errorCode ? <code>{call.errorCode}</code> : ""}</td>
                  <td>
                    <code id={`rid-${i}`}>{call.requestId}</code>{" "}
                    <button type="button" data-copy={`rid-${i}`} aria-label={`Copy request id ${call.requestId}`}>
                      Copy
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="audit-title">
        <h2 id="audit-title">Key events</h2>
        {v.audit.length === 0 ? (
          <p>No key events yet.</p>
        ) : (
          <table class="audit">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Key</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {v.audit.map((e) => (
                <tr data-event={e.event}>
                  <td>
                    <time datetime={e.at}>{utc(e.at)}</time>
                  </td>
                  <td>{e.event === "plan" ? "plan changed" : e.event}</td>
                  <td>{keyLabel(byId, e.keyId)}</td>
                  <td>{e.detail ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </Layout>
  );
}

/** `GET /account/activity?key=&status=`: the account's call log (filterable) and its key events. */
export function registerActivityPage(app: OpenAPIHono<AppEnv>, ctx: AccountContext): void {
  app.get("/account/activity", async (c: Context<AppEnv>) => {
    const { auth } = await ctx.loadAuth();
    const s = await auth.api.getSession({ headers: authHeaders(c) });
    if (!s) return c.redirect("/account", 303);
    const log = ctx.deps.activity;
    const keys = await ctx.deps.keys.accounts.overview(s.user.id);
    const filter = { key: c.req.query("key") ?? "", status: c.req.query("status") ?? "" };
    if (!STATUS_CHOICES.includes(filter.status)) filter.status = "";
    if (filter.key && !keys.some((k) => k.id === filter.key)) filter.key = "";
    const calls = log ? await log.listCalls(s.user.id, { keyId: filter.key || undefined, status: filter.status }) : [];
    const stored = log ? await log.listAudit(s.user.id) : [];
    // A key's expiry is an event of its own, read off the key.
    const now = new Date().toISOString();
    const expired: AuditEntry[] = keys
      .filter((k) => k.expiresAt !== null && k.expiresAt <= now && k.revokedAt === null)
      .map((k) => ({ ownerId: s.user.id, at: k.expiresAt as string, event: "expired", keyId: k.id, detail: null }));
    const audit = [...stored, ...expired].sort((a, b) => b.at.localeCompare(a.at));
    return c.html(<ActivityPage keys={keys} calls={calls} audit={audit} filter={filter} />);
  });
}
