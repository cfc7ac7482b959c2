import type { KeyOverview } from "../keys/index.js";
import { Cancel, Csrf, EXPIRY_CHOICES, shortKey, When } from "./keys-views.jsx";
import { Layout } from "./layout.jsx";

/** `EXPIRY_KEEP` in the expiry list leaves the expiry as it is (key-edit.ts). */
export const EXPIRY_KEEP = "keep";

/**
 * The form for POST /account/keys/:id/update, filled with the key's current settings (its own
 * limits); after a refused save, with what was typed and why it was refused.
 */
export function EditKeyPage(props: {
  k: KeyOverview;
  csrf: string;
  permission: string;
  error?: string;
  typed?: { name?: string; remaining?: string; ratelimit?: string };
}) {
  const { k, typed } = props;
  const id = encodeURIComponent(k.id);
  const rl = typed?.ratelimit ?? (k.ratelimit ? `${k.ratelimit.limit}/${k.ratelimit.durationSec}` : "none");
  const remaining = typed?.remaining ?? (k.remaining === null ? "unlimited" : String(k.remaining));
  return (
    <Layout title="Edit key">
      <h1>Edit key “{k.name}”</h1>
      <p>
        Key <code>{shortKey(k)}</code>, created <When iso={k.createdAt} />. The secret stays the same; your plan's
        limits still apply to every key together.
      </p>
      {props.error && (
        <p class="notice error" role="alert" id="edit-error">
          {props.error}
        </p>
      )}
      <form method="post" action={`/account/keys/${id}/update`} class="card">
        <Csrf token={props.csrf} />
        <label for="edit-name">Name</label>
        <input id="edit-name" name="name" required maxlength={64} value={typed?.name ?? k.name} />
        <label for="edit-expires">Expires</label>
        <select id="edit-expires" name="expires" aria-describedby="edit-expires-now">
          <option value={EXPIRY_KEEP} selected>
            Keep as it is
          </option>
          {EXPIRY_CHOICES.map((e) => (
            <option value={e.value}>{e.days === null ? e.label : `${e.label} from now`}</option>
          ))}
        </select>
        <p class="hint" id="edit-expires-now">
          Now: <When iso={k.expiresAt} />.
        </p>
        <label for="edit-remaining">Uses of its own</label>
        <input id="edit-remaining" name="remaining" value={remaining} />
        <p class="hint">A whole number, or “unlimited” to spend only your plan's uses.</p>
        <label for="edit-ratelimit">Rate limit of its own</label>
        <input id="edit-ratelimit" name="ratelimit" value={rl} aria-describedby="edit-ratelimit-hint" />
        <p class="hint" id="edit-ratelimit-hint">
          Calls per seconds (100/60 is 100 calls a minute), or “none” for only your plan's limit.
        </p>
        <fieldset>
          <legend>Permissions</legend>
          <input type="hidden" name="permissions_offered" value="1" />
          <label class="check">
            <input
              type="checkbox"
              name="permission"
              value={props.permission}
              checked={k.permissions.includes(props.permission)}
            />{" "}
            Classify texts (<code>{props.permission}</code>)
          </label>
        </fieldset>
        <div class="form-actions">
          <button type="submit">Save changes</button>
          <Cancel />
        </div>
      </form>
    </Layout>
  );
}
