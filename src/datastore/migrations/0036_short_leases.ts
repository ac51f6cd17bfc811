import type { Migration } from "./types.ts";

/**
 * Leases that renew: a maintenance claim and a notification claim carry their holder's token, so the holder
 * can extend its own lease while long work runs (and check it still holds it right before a send), and a
 * killed holder's lease lapses within about two periods. Notices that outlive notifications.max_age_hours
 * end `expired`.
 */
export const migration: Migration = {
  version: 36,
  name: "short_leases",
  statements: [
    "ALTER TABLE maintenance_runs ADD COLUMN claimed_by text",
    "ALTER TABLE notifications ADD COLUMN claimed_by text",
    // A notice's age counts from here: when it was queued, or last handed back by redeliver.
    "ALTER TABLE notifications ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now()",
    "UPDATE notifications SET queued_at = created_at",
    "ALTER TABLE notifications DROP CONSTRAINT notifications_status_check",
    "ALTER TABLE notifications ADD CONSTRAINT notifications_status_check CHECK (status IN ('pending', 'sending', 'retrying', 'sent', 'failed', 'suppressed', 'expired'))",
  ],
};
