import type { Migration } from "./types.ts";

/**
 * The two dampers against flapping, per rule and overridable at every level like thresholds: `for` (the
 * condition holds this many minutes before the alert fires; until then it is `pending`, not notified) and a
 * clear delay (the alert clears only after the condition has been false this many minutes). 0 = off, as before.
 * An override's null inherits the rule's value.
 */
export const migration: Migration = {
  version: 39,
  name: "alert_dampers",
  statements: [
    "ALTER TABLE alert_rules ADD COLUMN default_for_minutes integer NOT NULL DEFAULT 0 CHECK (default_for_minutes >= 0)",
    "ALTER TABLE alert_rules ADD COLUMN default_clear_delay_minutes integer NOT NULL DEFAULT 0 CHECK (default_clear_delay_minutes >= 0)",
    "ALTER TABLE alert_overrides ADD COLUMN for_minutes integer CHECK (for_minutes >= 0)",
    "ALTER TABLE alert_overrides ADD COLUMN clear_delay_minutes integer CHECK (clear_delay_minutes >= 0)",
    "ALTER TABLE alerts ADD COLUMN pending_since timestamptz",
    "ALTER TABLE alerts ADD COLUMN clearing_since timestamptz",
    "ALTER TABLE alerts DROP CONSTRAINT alerts_status_check",
    "ALTER TABLE alerts ADD CONSTRAINT alerts_status_check CHECK (status IN ('pending', 'active', 'acknowledged', 'cleared'))",
  ],
};
