import type { Child } from "hono/jsx";
import type { CreatedKey, KeyInfo } from "../../ports/key-store.js";
import type { LinkProvider } from "./providers.js";

export interface Notice {
  kind: "ok" | "error";
  text: string;
}

function Layout(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title} · Almanac</title>
        <link rel="stylesheet" href="/account/assets/account.css" />
        <script src="/account/assets/account.js" defer></script>
      </head>
      <body>
        <header>
          <a href="/account" class="brand">
            Almanac
          </a>
        </header>
        <main id="main">{props.children}</main>
      </body>
    </html>
  );
}

function NoticeBox({ notice }: { notice?: Notice }) {
  if (!notice) return null;
  return (
    <p class={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
      {notice.text}
    </p>
  );
}

export type SignInStep = { step: "unavailable" } | { step: "email" } | { step: "code"; email: string };

export function SignInPage(props: { state: SignInStep; notice?: Notice }) {
  const { state } = props;
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <NoticeBox notice={props.notice} />
      {state.step === "unavailable" && (
        <p class="notice error" role="alert">
          Sign-in is unavailable: this server has no mail lane configured to send sign-in codes.
        </p>
      )}
      {state.step === "email" && (
        <form method="post" action="/account/sign-in" class="card">
          <label for="email">E-mail address</label>
          <input id="email" name="email" type="email" required autocomplete="email" maxlength={254} />
          <button type="submit">Send me a code</button>
          <p class="hint">We mail you a one-time code. No password needed.</p>
        </form>
      )}
      {state.step === "code" && (
        <form method="post" action="/account/verify" class="card">
          <p>If {state.email} can receive mail, a 6-digit code is on its way. It expires in 10 minutes.</p>
          <input type="hidden" name="email" value={state.email} />
          <label for="code">Code</label>
          <input
            id="code"
            name="code"
            inputmode="numeric"
            autocomplete="one-time-code"
            pattern="[0-9]{6}"
            maxlength={6}
            required
          />
          <button type="submit">Sign in</button>
          <p class="hint">
            <a href="/account">Use another address</a>
          </p>
        </form>
      )}
    </Layout>
  );
}

export interface Identity {
  id: string;
  providerId: string;
  providerName: string;
  accountId: string;
}

export interface AccountView {
  email: string;
  csrf: string;
  keys: KeyInfo[];
  created?: CreatedKey;
  identities: Identity[];
  providers: LinkProvider[];
  notice?: Notice;
}

const day = (iso: string | null) => (iso ? iso.slice(0, 16).replace("T", " ") : "never");

function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="csrf" value={token} />;
}

function KeyRow({ k, csrf }: { k: KeyInfo; csrf: string }) {
  return (
    <tr>
      <td>{k.name}</td>
      <td>
        <code>
          {k.prefix}…{k.last4}
        </code>
      </td>
      <td>{day(k.createdAt)}</td>
      <td>{day(k.lastUsedAt)}</td>
      <td>{k.remaining === null ? "unlimited" : k.remaining}</td>
      <td>
        <span class={`status ${k.status}`}>{k.status}</span>
      </td>
      <td class="actions">
        {k.status === "active" && (
          <>
            <form method="post" action={`/account/keys/${encodeURIComponent(k.id)}/roll`}>
              <Csrf token={csrf} />
              <button type="submit" aria-label={`Roll key ${k.name}`}>
                Roll
              </button>
            </form>
            <form method="post" action={`/account/keys/${encodeURIComponent(k.id)}/revoke`}>
              <Csrf token={csrf} />
              <button type="submit" class="danger" aria-label={`Revoke key ${k.name}`}>
                Revoke
              </button>
            </form>
          </>
        )}
      </td>
    </tr>
  );
}

function CreatedBox({ created }: { created: CreatedKey }) {
  return (
    <section class="card created" aria-labelledby="created-title">
      <h2 id="created-title">Your new key “{created.name}”</h2>
      <p>Copy it now: it is shown only once. Keep it on a server, never in front-end code.</p>
      <div class="secret">
        <code id="new-key">{created.key}</code>
        <button type="button" data-copy="new-key">
          Copy
        </button>
      </div>
    </section>
  );
}

export function AccountPage(v: AccountView) {
  const linked = new Set(v.identities.map((i) => i.providerId));
  return (
    <Layout title="Your account">
      <div class="top">
        <h1>Your account</h1>
        <form method="post" action="/account/sign-out">
          <Csrf token={v.csrf} />
          <span class="who">{v.email}</span> <button type="submit">Sign out</button>
        </form>
      </div>
      <NoticeBox notice={v.notice} />
      {v.created && <CreatedBox created={v.created} />}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        {v.keys.length === 0 ? (
          <p>You have no keys yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Remaining uses</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {v.keys.map((k) => (
                <KeyRow k={k} csrf={v.csrf} />
              ))}
            </tbody>
          </table>
        )}
        <form method="post" action="/account/keys" class="inline">
          <Csrf token={v.csrf} />
          <label for="key-name">New key name</label>
          <input id="key-name" name="name" required maxlength={64} placeholder="production server" />
          <button type="submit">Create key</button>
        </form>
      </section>
      <section aria-labelledby="ids-title">
        <h2 id="ids-title">Linked identities</h2>
        {v.identities.length === 0 ? (
          <p>No external identity is linked.</p>
        ) : (
          <ul class="identities">
            {v.identities.map((i) => (
              <li>
                <span>
                  {i.providerName} <code>{i.accountId}</code>
                </span>
                <form method="post" action={`/account/identities/${encodeURIComponent(i.id)}/unlink`}>
                  <Csrf token={v.csrf} />
                  <button type="submit" aria-label={`Unlink ${i.providerName}`}>
                    Unlink
                  </button>
                </form>
              </li>
            ))}
          </ul>
        )}
        {v.providers
          .filter((p) => !linked.has(p.id))
          .map((p) => (
            <form method="post" action={`/account/link/${p.id}`} class="inline">
              <Csrf token={v.csrf} />
              <button type="submit">Link {p.name}</button>
            </form>
          ))}
        {v.providers.length === 0 && <p class="hint">No identity provider is configured on this server.</p>}
      </section>
    </Layout>
  );
}
