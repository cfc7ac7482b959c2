/**
 * The log of each account's keyed calls and the audit log of its key events, as the app holds it
 * (AppDeps.activity). Recording only appends in memory (no I/O on the request path); reads write
 * what is pending first. Implemented by features/keys/activity-log.ts.
 */
export interface CallEntry {
  ownerId: string;
  keyId: string;
  at: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  requestId: string;
}

export type AuditEvent = "created" | "edited" | "rolled" | "revoked" | "expired" | "plan";

export interface AuditEntry {
  ownerId: string;
  at: string;
  event: AuditEvent;
  keyId: string | null;
  detail: string | null;
}

export interface CallFilter {
  keyId?: string;
  /** `2xx`, `4xx`, `5xx`, or one status. */
  status?: string;
}

export interface ActivityLogPort {
  recordCall(e: CallEntry): void;
  recordAudit(e: AuditEntry): void;
  /** An account's calls, newest first, filtered by key and status. */
  listCalls(ownerId: string, filter?: CallFilter, limit?: number): Promise<CallEntry[]>;
  /** An account's key events, newest first. */
  listAudit(ownerId: string, limit?: number): Promise<AuditEntry[]>;
  /** Writes what is pending. */
  flush(): Promise<void>;
  close(): Promise<void>;
}
