import type { AccountPlan, DailyCounts, KeyOverview } from "../keys/index.js";
import type { KeyFlash } from "./flash.js";
import { Layout } from "./layout.jsx";
import { type DailyUsage, UsageChart } from "./usage-chart.jsx";

/** Times as `2026-11-22 23:40 UTC`, in a `<time>` with the exact instant. */
export function When({ iso, none = "never" }: { iso: string | null; none?: string }) {
  if (!iso) return <span class="muted">{none}</span>;
  return <time datetime={iso}>{`${iso.slice(0, 16).replace("T", " ")} UTC`}</time>;
}

export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="csrf" value={token} />;
}

export const EXPIRY_CHOICES: { value: string; label: string; days: number | null }[] = [
  { value: "never", label: "Never", days: null },
  { value: "7d", label: "In 7 days", days: 7 },
  { value: "30d", label: "In 30 days", days: 30 },
  { value: "90d", label: "In 90 days", days: 90 },
  { value: "365d", label: "In a year", days: 365 },
];

/** What a roll does with the old key unless told otherwise: a routine rotation keeps the running server working. */
export const DEFAULT_GRACE = "86400";

export const GRACE_CHOICES: { value: string; label: string; seconds: number }[] = [
  { value: "0", label: "Revoke the old key now (it leaked)", seconds: 0 },
  { value: "3600", label: "Keep the old key working for 1 hour", seconds: 3600 },
  { value: "86400", label: "Keep the old key working for 24 hours", seconds: 86400 },
  { value: "604800", label: "Keep the old key working for 7 days", seconds: 604800 },
];

const uses = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en"));

export const shortKey = (k: KeyOverview) => `${k.prefix}…${k.last4}`;

/** The other key of a roll that still works (old → new), if any. */
export function livePair(k: KeyOverview, all: KeyOverview[]): KeyOverview | undefined {
  return all.find((x) => x.status === "active" && (x.id === k.replaces || x.id === k.replacedBy));
}

function Status({ k, all }: { k: KeyOverview; all: KeyOverview[] }) {
  const replacement = k.replacedBy ? all.find((x) => x.id === k.replacedBy) : undefined;
  const next = replacement?.status === "active" ? replacement : undefined;
  const prev = k.replaces ? all.find((x) => x.id === k.replaces && x.status === "active") : undefined;
  return (
    <>
      <span class={`status ${k.status}`}>{k.rolledAt && k.status === "active" ? "rolled (grace)" : k.status}</span>
      {next && k.status === "active" && (
        <span class="pair">
          {" "}
          → <code>{shortKey(next)}</code>
        </span>
      )}
      {replacement && !next && k.status === "active" && <span class="pair"> (its replacement was revoked)</span>}
      {prev && (
        <span class="pair">
          {" "}
          replaces <code>{shortKey(prev)}</code> (in grace)
        </span>
      )}
    </>
  );
}

function KeyRow({ k, all, daily }: { k: KeyOverview; all: KeyOverview[]; daily?: DailyUsage }) {
  const id = encodeURIComponent(k.id);
  return (
    <tr>
      <th scope="row">
        <span class="key-name">{k.name}</span> <code>{shortKey(k)}</code>{" "}
        <span class="muted">{k.permissions.length ? k.permissions.join(", ") : "lookups only"}</span>
      </th>
      <td data-label="Status">
        <Status k={k} all={all} />
      </td>
      <td data-label="Use">
        {daily && <UsageChart usage={daily} id={k.id} />}
        <dl class="facts">
          <dt>Last used</dt>
          <dd>
            <When iso={k.lastUsedAt} />
          </dd>
          <dt>Calls 24 h</dt>
          <dd class="num">{k.usage.last24h}</dd>
          <dt>Calls 30 d</dt>
          <dd class="num">{k.usage.last30d}</dd>
          <dt>Remaining uses</dt>
          <dd class="num">{uses(k.remaining)}</dd>
        </dl>
      </td>
      <td data-label="Dates">
        <dl class="facts">
          <dt>Created</dt>
          <dd>
            <When iso={k.createdAt} />
          </dd>
          <dt>Expires</dt>
          <dd>
            <When iso={k.expiresAt} />
          </dd>
          {k.status === "revoked" && (
            <>
              <dt>Revoked</dt>
              <dd>
                <When iso={k.revokedAt} none="yes" />
                {k.revokedReason === "plan" && <span class="muted"> (plan change)</span>}
              </dd>
            </>
          )}
        </dl>
      </td>
      <td data-label="Actions">
        <div class="actions">
          {k.status === "active" && (
            <a href={`/account/keys/${id}/edit`} class="button" aria-label={`Edit key ${k.name} (${shortKey(k)})`}>
              Edit…
            </a>
          )}
          {!rollRefusal(k, livePair(k, all)) && (
            <a href={`/account/keys/${id}/roll`} class="button" aria-label={`Roll key ${k.name} (${shortKey(k)})`}>
              Roll…
            </a>
          )}
          {k.status === "active" && (
            <a
              href={`/account/keys/${id}/revoke`}
              class="button danger"
              aria-label={`Revoke key ${k.name} (${shortKey(k)})`}
            >
              Revoke…
            </a>
          )}
        </div>
      </td>
    </tr>
  );
}

/** Keys a downgrade revoked in the last 30 days: said plainly above the table. */
function PlanChangeNotice({ keys, plan }: { keys: KeyOverview[]; plan: AccountPlan }) {
  const since = Date.now() - 30 * 86_400_000;
  const revoked = keys.filter((k) => k.revokedReason === "plan" && Date.parse(k.revokedAt ?? "") > since);
  if (revoked.length === 0) return null;
  return (
    <p class="notice error" role="status">
      Your plan changed to <strong>{plan.name}</strong>, which allows {plan.maxActiveKeys} active keys:{" "}
      {revoked.length === 1 ? "1 key was" : `${revoked.length} keys were`} revoked, newest first (
      {revoked.map((k) => k.name).join(", ")}).
    </p>
  );
}

/** The new key, shown once, autofocused, with a copy button and a ready curl line it is allowed to run. */
export function NewKeyBox(props: { flash: KeyFlash; publicUrl: string; classify: boolean }) {
  const { flash, publicUrl } = props;
  // A key without the classify permission would get 403 there: it is offered a lookup instead.
  const curl = props.classify
    ? `curl -X POST ${publicUrl}/v1/vibe/classify -H "Authorization: Bearer ${flash.key}" -H "Content-Type: application/json" -d '["What a lovely day"]'`
    : `curl ${publicUrl}/v1/moon -H "Authorization: Bearer ${flash.key}"`;
  return (
    <section class="card created" aria-labelledby="created-title">
      <h2 id="created-title">
        {flash.kind === "rolled" ? "Replacement" : "Your new key"} “{flash.name}”
      </h2>
      <p>Copy it now: it is shown only once. Keep it on a server, never in front-end code.</p>
      <div class="secret">
        <code id="new-key" tabindex={0} autofocus>
          {flash.key}
        </code>
        <button type="button" data-copy="new-key">
          Copy
        </button>
      </div>
      <p class="hint">Try it:</p>
      <div class="secret">
        <code id="new-key-curl">{curl}</code>
        <button type="button" data-copy="new-key-curl" aria-label="Copy curl command">
          Copy curl
        </button>
      </div>
      <p class="hint">
        See its limits and usage any time: <code>{`curl ${publicUrl}/v1/usage -H "Authorization: Bearer …"`}</code>
      </p>
    </section>
  );
}

const dailyOf = (d: DailyCounts, id: string): DailyUsage | undefined => {
  const counts = d.perDay.get(id);
  return counts && { from: d.from, counts, refused: d.refusedPerDay.get(id) ?? [] };
};

/** Revoked and expired keys wait behind "show all"; a used-up key stays in view (it can be edited back). */
const retired = (k: KeyOverview) => k.status === "revoked" || k.status === "expired";

export function KeysSection(v: {
  keys: KeyOverview[];
  csrf: string;
  plan: AccountPlan;
  permission: string;
  /** `?all=1`: revoked and expired keys too. */
  showAll: boolean;
  /** Allowed and refused calls per day over 30 days, per key id. */
  daily: DailyCounts;
}) {
  const active = v.keys.filter((k) => k.status === "active" && !k.rolledAt).length;
  const hidden = v.keys.filter(retired).length;
  const shown = v.showAll ? v.keys : v.keys.filter((k) => !retired(k));
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <PlanChangeNotice keys={v.keys} plan={v.plan} />
      <p class="plan">
        Plan <strong>{v.plan.name}</strong>: {uses(v.plan.quota)} uses and {v.plan.ratelimit.limit} calls per{" "}
        {v.plan.ratelimit.durationSec} s for all your keys together ({uses(v.plan.usesLeft ?? v.plan.quota)} uses left),{" "}
        {active} of {v.plan.maxActiveKeys} active keys, {v.plan.creationsPerDay} new keys a day. Times are in UTC.
      </p>
      {shown.length === 0 ? (
        <p>{hidden ? "You have no active keys." : "You have no keys yet."}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col">Use</th>
                <th scope="col">Dates</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <KeyRow k={k} all={v.keys} daily={dailyOf(v.daily, k.id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {hidden > 0 && (
        <p>
          {v.showAll ? (
            <a href="/account#keys-title">Hide revoked and expired keys</a>
          ) : (
            <a href="/account?all=1#keys-title">
              Show all keys ({hidden} revoked or expired {hidden === 1 ? "key is" : "keys are"} hidden)
            </a>
          )}
        </p>
      )}
      <form method="post" action="/account/keys" class="card create-key">
        <h3>New key</h3>
        <Csrf token={v.csrf} />
        <label for="key-name">New key name</label>
        <input id="key-name" name="name" required maxlength={64} placeholder="production server" />
        <label for="key-expires">Expires</label>
        <select id="key-expires" name="expires">
          {EXPIRY_CHOICES.map((e) => (
            <option value={e.value}>{e.label}</option>
          ))}
        </select>
        <fieldset>
          <legend>Permissions</legend>
          <input type="hidden" name="permissions_offered" value="1" />
          <label class="check">
            <input type="checkbox" name="permission" value={v.permission} checked /> Classify texts (
            <code>{v.permission}</code>)
          </label>
          <p class="hint">Every key lifts lookups past the demo tier, within the plan.</p>
        </fieldset>
        <button type="submit">Create key</button>
      </form>
    </section>
  );
}

/** Why the key cannot be rolled now, in words (the roll form is not offered then), or undefined. */
export function rollRefusal(k: KeyOverview, pair: KeyOverview | undefined): string | undefined {
  if (k.status !== "active") return `This key is ${k.status}: only an active key can be rolled.`;
  if (!pair && k.replacedBy)
    return "This key was already rolled and its replacement was revoked: it stops working at the end of its grace period. Create a new key instead.";
  if (!pair) return undefined;
  if (k.replacedBy === pair.id)
    return `This key was already rolled: its replacement is ${shortKey(pair)}, and this key stops working at the end of its grace period. Revoke it now if it leaked.`;
  return `This key replaced ${shortKey(pair)}, which still works until its grace period ends. It can be rolled once that key is gone: revoke ${shortKey(pair)} first to roll now.`;
}

export const Cancel = () => (
  <a href="/account" class="button secondary">
    Cancel
  </a>
);

/** Confirmation before a roll or a revoke (a GET page; the POST is its button). */
export function ConfirmKeyPage(props: {
  action: "roll" | "revoke";
  k: KeyOverview;
  /** The other key of its roll, still working: revoking offers to revoke both; a rolled key is not rolled again. */
  pair?: KeyOverview;
  csrf: string;
}) {
  const { k, action, pair } = props;
  const id = encodeURIComponent(k.id);
  const refusal =
    action === "roll" ? rollRefusal(k, pair) : k.status === "active" ? undefined : `This key is ${k.status}.`;
  return (
    <Layout title={action === "roll" ? "Roll key" : "Revoke key"}>
      <h1>
        {action === "roll" ? "Roll" : "Revoke"} key “{k.name}”?
      </h1>
      <p>
        Key{" "}
        <code>
          {k.prefix}…{k.last4}
        </code>
        , created <When iso={k.createdAt} />.
      </p>
      {refusal ? (
        <div class="card">
          <p>{refusal}</p>
          <a href="/account" class="button">
            Back to your keys
          </a>
        </div>
      ) : (
        <form method="post" action={`/account/keys/${id}/${action}`} class="card">
          <Csrf token={props.csrf} />
          {action === "roll" ? (
            <>
              <p>A replacement with the same settings is issued and shown once.</p>
              <label for="grace">The old key</label>
              <select id="grace" name="grace">
                {GRACE_CHOICES.map((g) => (
                  <option value={g.value} selected={g.value === DEFAULT_GRACE}>
                    {g.label}
                  </option>
                ))}
              </select>
              <div class="form-actions">
                <button type="submit">Roll key</button>
                <Cancel />
              </div>
            </>
          ) : (
            <>
              <p>Calls with this key are refused from now on. This cannot be undone.</p>
              {pair && (
                <fieldset>
                  <legend>
                    This key was rolled: <code>{shortKey(k.replacedBy === pair.id ? k : pair)}</code> →{" "}
                    <code>{shortKey(k.replacedBy === pair.id ? pair : k)}</code>
                  </legend>
                  <label class="check">
                    <input type="radio" name="only" value="0" checked /> Revoke both keys (<code>{shortKey(pair)}</code>{" "}
                    too)
                  </label>
                  <label class="check">
                    <input type="radio" name="only" value="1" /> Revoke only <code>{shortKey(k)}</code>
                  </label>
                </fieldset>
              )}
              <div class="form-actions">
                <button type="submit" class="danger">
                  Revoke key
                </button>
                <Cancel />
              </div>
            </>
          )}
        </form>
      )}
    </Layout>
  );
}
