import type { Migration } from "./types.ts";

/**
 * A server in collection back-off is still checked for reachability (a connect and SELECT 1) at its shortest
 * probe interval, so its recovery is seen within about that, not after the back-off of up to 10 minutes.
 */
export const migration: Migration = {
  version: 38,
  name: "reachability_checks",
  statements: [
    "ALTER TABLE connection_health ADD COLUMN checked_at timestamptz",
    "ALTER TABLE connection_health ADD COLUMN check_every_seconds integer NOT NULL DEFAULT 60",
  ],
};
