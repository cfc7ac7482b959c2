import { BillingSection, type BillingView, CONFIRM_REFRESH_SEC, PlansTable } from "../billing/index.js";
import type { DailyCounts, KeyOverview, Plan } from "../keys/index.js";
import type { KeyFlash } from "./flash.js";
import { KeysSection, NewKeyBox } from "./keys-views.jsx";
import { Layout } from "./layout.jsx";
import type { LinkProvider } from "./providers.js";

export interface Notice {
  kind: "ok" | "error";
  text: string;
}

function NoticeBox({ notice }: { notice?: Notice }) {
  if (!notice) return null;
  return (
    <p class={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
      {notice.text}
    </p>
  );
}

export type SignInStep =
  | { step: "unavailable" }
  /** `email`: the address to fill in again (its code died). */
  | { step: "email"; email?: string; buy?: string }
  | { step: "code"; email: string; left: number };

/** Why identity providers are off on this host: they return to this origin (PUBLIC_URL unset). */
function ProvidersElsewhere({ origin }: { origin?: string }) {
  if (!origin) return null;
  return (
    <p class="hint">
      Signing in with an identity provider works only at {origin} on this server. Its operator must set PUBLIC_URL to
      the address you opened.
    </p>
  );
}

export function SignInPage(props: {
  state: SignInStep;
  notice?: Notice;
  providers?: LinkProvider[];
  /** Identity providers are off on this host (see ProvidersElsewhere). */
  needPublicUrl?: string;
}) {
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
          <input
            id="email"
            name="email"
            type="email"
            required
            autocomplete="email"
            maxlength={254}
            value={state.email}
          />
          {state.buy && <input type="hidden" name="buy" value={state.buy} />}
          <button type="submit">Send me a code</button>
          <p class="hint">We mail you a one-time code. No password needed.</p>
        </form>
      )}
      {state.step === "email" && (props.providers?.length ?? 0) > 0 && (
        <section aria-labelledby="idp-title" class="card providers">
          <h2 id="idp-title">Or with an identity provider</h2>
          {props.providers?.map((p) => (
            <form method="post" action={`/account/sign-in-with/${p.id}`} class="inline">
              {state.buy && <input type="hidden" name="buy" value={state.buy} />}
              <button type="submit" class="secondary">
                Sign in with {p.name}
              </button>
            </form>
          ))}
          <p class="hint">
            The first time, this makes an account for the e-mail address the provider has verified. Already have an
            account with that address? Sign in with it above, then link the identity under “Linked identities”.
          </p>
        </section>
      )}
      {state.step === "email" && <ProvidersElsewhere origin={props.needPublicUrl} />}
      {state.step === "code" && (
        <>
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
              autofocus
              aria-describedby="tries"
            />
            <button type="submit">Sign in</button>
            <p class="hint" id="tries">
              {state.left} {state.left === 1 ? "try" : "tries"} left for this code.
            </p>
          </form>
          <form method="post" action="/account/sign-in" class="inline">
            <input type="hidden" name="email" value={state.email} />
            <button type="submit" class="secondary">
              Send a new code
            </button>
          </form>
          <form method="post" action="/account/sign-in/restart" class="inline">
            <button type="submit" class="secondary">
              Use another address
            </button>
          </form>
        </>
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
  keys: KeyOverview[];
  /** keys-views.tsx: the plan, the one-read new key, the curl line's origin, the permission offered. */
  plan: Plan;
  flash: KeyFlash | null;
  publicUrl: string;
  permission: string;
  identities: Identity[];
  providers: LinkProvider[];
  /** Identity providers are off on this host (see ProvidersElsewhere). */
  needPublicUrl?: string;
  /** `?all=1`: revoked and expired keys are listed too. */
  showAll: boolean;
  /** Allowed and refused calls per UTC day over 30 days, per key (the chart in each row). */
  daily: DailyCounts;
  /** Plans, the subscription and Stripe's confirmation of a purchase (features/billing). */
  billing: BillingView;
  notice?: Notice;
}

function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="csrf" value={token} />;
}

export function AccountPage(v: AccountView) {
  const linked = new Set(v.identities.map((i) => i.providerId));
  return (
    <Layout
      title="Your account"
      refresh={v.billing.refresh ? { sec: CONFIRM_REFRESH_SEC, url: v.billing.refresh } : undefined}
    >
      <div class="top">
        <h1>Your account</h1>
        <form method="post" action="/account/sign-out">
          <Csrf token={v.csrf} />
          <span class="who">{v.email}</span> <button type="submit">Sign out</button>
        </form>
      </div>
      <NoticeBox notice={v.notice} />
      {v.flash && (
        <NewKeyBox
          flash={v.flash}
          publicUrl={v.publicUrl}
          classify={v.keys.find((k) => k.id === v.flash?.id)?.permissions.includes(v.permission) ?? true}
        />
      )}
      <KeysSection
        keys={v.keys}
        csrf={v.csrf}
        plan={v.plan}
        permission={v.permission}
        showAll={v.showAll}
        daily={v.daily}
      />
      <p>
        <a href="/account/activity">Recent calls and key events</a>
      </p>
      <BillingSection view={v.billing} csrf={v.csrf} />
      <PlansTable
        cards={v.billing.cards}
        configured={v.billing.configured}
        current={v.billing.plan}
        csrf={v.csrf}
        subscribed={v.billing.subscribed}
        chosen={v.billing.chosen}
      />
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
        {v.providers.length === 0 && !v.needPublicUrl && (
          <p class="hint">No identity provider is configured on this server.</p>
        )}
        <ProvidersElsewhere origin={v.needPublicUrl} />
      </section>
    </Layout>
  );
}

/** An account error as a page: what went wrong, how long to wait, and the way back. */
export function ErrorPage(props: { status: number; message: string; requestId: string; retryAfterSec?: number }) {
  const minutes = props.retryAfterSec === undefined ? undefined : Math.max(1, Math.ceil(props.retryAfterSec / 60));
  return (
    <Layout title="Something went wrong">
      <h1>{props.status === 404 ? "Not found" : props.status === 429 ? "Too many requests" : "That did not work"}</h1>
      <p class="notice error" role="alert">
        {props.message}
        {minutes !== undefined && ` Try again in ${minutes} minute${minutes > 1 ? "s" : ""}.`}
      </p>
      <p>
        <a href="/account">Back to your account</a> · <a href="/">Home</a>
      </p>
      <p class="hint">
        Error {props.status}, request id <code>{props.requestId}</code>.
      </p>
    </Layout>
  );
}
