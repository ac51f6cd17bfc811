import { MCP_PRIVILEGES } from "../../vocabulary/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

const SCOPE_COLUMNS = `
      scope text NOT NULL CHECK (scope IN ('estate', 'group', 'cluster', 'server')),
      group_id integer REFERENCES cluster_groups (id) ON DELETE CASCADE,
      cluster_id integer REFERENCES clusters (id) ON DELETE CASCADE,
      connection_id integer REFERENCES connections (id) ON DELETE CASCADE,
      database_name text,
      CHECK ((scope = 'estate') = (group_id IS NULL AND cluster_id IS NULL AND connection_id IS NULL)),
      CHECK (scope <> 'group' OR (group_id IS NOT NULL AND cluster_id IS NULL AND connection_id IS NULL)),
      CHECK (scope <> 'cluster' OR (cluster_id IS NOT NULL AND group_id IS NULL AND connection_id IS NULL)),
      CHECK (scope <> 'server' OR (connection_id IS NOT NULL AND group_id IS NULL AND cluster_id IS NULL)),
      CHECK (scope = 'server' OR database_name IS NULL)`;

/**
 * Maintenance windows. A blackout's state comes from its times, never a stored flag. A schedule's windows are
 * materialised by the alerter; the unique (schedule, start) index makes that happen once however many
 * alerters run.
 */
export const migration: Migration = {
  version: 10,
  name: "blackouts",
  statements: [
    `CREATE TABLE blackout_schedules (
      id serial PRIMARY KEY,${SCOPE_COLUMNS},
      name text NOT NULL,
      cron_expression text NOT NULL,
      duration_minutes integer NOT NULL CHECK (duration_minutes > 0),
      timezone text NOT NULL DEFAULT 'UTC',
      reason text NOT NULL DEFAULT '',
      enabled boolean NOT NULL DEFAULT true,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE blackouts (
      id serial PRIMARY KEY,${SCOPE_COLUMNS},
      reason text NOT NULL DEFAULT '',
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      schedule_id integer REFERENCES blackout_schedules (id) ON DELETE SET NULL,
      CHECK (end_time > start_time)
    )`,
    `CREATE INDEX blackouts_time ON blackouts (end_time, start_time)`,
    `CREATE UNIQUE INDEX blackouts_once_per_scheduled_start ON blackouts (schedule_id, start_time) WHERE schedule_id IS NOT NULL`,
    ...MCP_PRIVILEGES.filter((p) => p.identifier === "list_blackouts").map(
      (p) =>
        `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
    ),
  ],
};
