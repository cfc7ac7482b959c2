// The keys feature's public face: what other features (account, billing), the CLI and the
// composition root use.
export { AccountKeys, type AccountPlan, type KeyOverview } from "./account-keys.js";
export { AccountQuotas, calendarMonth, type QuotaPeriod, quotaPool } from "./account-quota.js";
export {
  ACTIVITY_EXPIRIES,
  ActivityLog,
  type AuditEntry,
  type AuditEvent,
  CALL_LOG_LIMIT,
  type CallEntry,
  type CallFilter,
} from "./activity-log.js";
export { recordKeyedCalls } from "./call-log.js";
export { Counted } from "./counted.js";
export { createExpiryReminders, ExpiryReminders } from "./expiry-reminders.js";
export { CLEAR_WORDS, isKeyName, KEY_NAME_RULE, MAX_USES, parseRatelimit, parseUses } from "./key-fields.js";
export { isPlanName, PLAN_NAMES, PLANS, type Plan, type PlanName } from "./plans.js";
export { Pooled } from "./pooled.js";
export { type KeyRefusal, keyRefusalError, keyRefusalMessage } from "./refusals.js";
export { KeyService } from "./service.js";
export { type DailyCounts, UsageCounter } from "./usage.js";
export { registerUsage } from "./usage-route.js";
