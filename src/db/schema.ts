/**
 * Tables of the project's own database (better-auth's tables are created by better-auth
 * itself; see features/account). Timestamps are ISO 8601 UTC text and booleans 0/1 integers,
 * so one set of migrations and queries runs unchanged on SQLite and PostgreSQL.
 */
export interface DB {
  almanac_meta: {
    key: string;
    value: string;
    updated_at: string;
  };
  idempotency: {
    scope: string;
    key: string;
    body_hash: string;
    /** 0 while the first request is still running. */
    status: number;
    response: string | null;
    created_at: string;
  };
  /** API keys of the embedded key store (features/vibe, adapters/keys/embedded.ts). */
  api_keys: {
    id: string;
    /** SHA-256 hex of the plaintext key: the only form of the key that is stored. */
    key_hash: string;
    /** `alm_` + the first characters, and the last four: for display only. */
    start: string;
    last4: string;
    name: string;
    owner_id: string | null;
    /** JSON array of permission names. */
    permissions: string;
    expires_at: string | null;
    /** Uses left; null = unlimited. Never below zero. */
    remaining: number | null;
    ratelimit_limit: number | null;
    ratelimit_duration_sec: number | null;
    revoked_at: string | null;
    last_used_at: string | null;
    created_at: string;
  };
  /** Contact desk messages (features/contact): stored before the send, then marked. */
  contact_messages: {
    id: string;
    name: string;
    email: string;
    subject: string | null;
    message: string;
    client_ip: string | null;
    /** The request's Idempotency-Key, so a client retry after a failed send resends this row. */
    idempotency_key: string | null;
    /** pending (stored; send in progress or interrupted), sent, failed. */
    status: string;
    attempts: number;
    last_error: string | null;
    /** The SMTP Message-ID of the successful send. */
    message_id: string | null;
    created_at: string;
    updated_at: string;
    sent_at: string | null;
  };
}
