import type { Migration } from "./types.ts";

/** Collector state: per (connection, probe) schedule and outcome, per-connection backoff, periodic maintenance. */
export const migration: Migration = {
  version: 6,
  name: "collector",
  statements: [
    `CREATE TABLE probe_schedule (
      connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      probe_name text NOT NULL,
      last_run_at timestamptz,
      not_before timestamptz,
      claimed_until timestamptz,
      last_status text CHECK (last_status IN ('ok', 'unavailable', 'error')),
      last_error text,
      last_success_at timestamptz,
      last_rows integer,
      PRIMARY KEY (connection_id, probe_name)
    )`,
    `CREATE TABLE connection_health (
      connection_id integer PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
      consecutive_failures integer NOT NULL DEFAULT 0,
      retry_at timestamptz
    )`,
    `CREATE TABLE maintenance_runs (
      task text PRIMARY KEY,
      last_run_at timestamptz,
      claimed_until timestamptz
    )`,
  ],
};
