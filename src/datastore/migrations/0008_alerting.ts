import { MCP_PRIVILEGES } from "../../vocabulary/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

/**
 * Alerting: rules (the built-in set is seeded at every start-up, see alerts/seed-rules.ts), overrides per
 * server/cluster/group, alerts with their acknowledgments, baselines, and the alerter's settings. At most one
 * open (not cleared) alert exists per key: the partial unique index is what keeps racing alerters honest.
 */
export const migration: Migration = {
  version: 8,
  name: "alerting",
  statements: [
    `CREATE TABLE alert_rules (
      id serial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      description text NOT NULL DEFAULT '',
      category text NOT NULL,
      metric_name text NOT NULL,
      metric_unit text,
      default_operator text NOT NULL CHECK (default_operator IN ('>', '>=', '<', '<=', '==', '!=')),
      default_threshold double precision NOT NULL,
      default_severity text NOT NULL CHECK (default_severity IN ('info', 'warning', 'critical')),
      default_enabled boolean NOT NULL DEFAULT true,
      required_extension text,
      is_built_in boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE alert_overrides (
      id serial PRIMARY KEY,
      rule_id integer NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
      scope text NOT NULL CHECK (scope IN ('server', 'cluster', 'group')),
      scope_id integer NOT NULL,
      database_name text NOT NULL DEFAULT '',
      operator text NOT NULL CHECK (operator IN ('>', '>=', '<', '<=', '==', '!=')),
      threshold double precision NOT NULL,
      severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
      enabled boolean NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (scope = 'server' OR database_name = ''),
      UNIQUE (rule_id, scope, scope_id, database_name)
    )`,
    `CREATE TABLE alerts (
      id bigserial PRIMARY KEY,
      alert_type text NOT NULL CHECK (alert_type IN ('threshold', 'anomaly', 'connection')),
      rule_id integer REFERENCES alert_rules (id) ON DELETE SET NULL,
      connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      database_name text NOT NULL DEFAULT '',
      object_name text NOT NULL DEFAULT '',
      probe_name text,
      metric_name text NOT NULL DEFAULT '',
      metric_value double precision,
      threshold_value double precision,
      operator text,
      severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
      title text NOT NULL,
      description text NOT NULL DEFAULT '',
      status text NOT NULL CHECK (status IN ('active', 'acknowledged', 'cleared')),
      triggered_at timestamptz NOT NULL DEFAULT now(),
      cleared_at timestamptz,
      last_updated timestamptz NOT NULL DEFAULT now(),
      anomaly_score double precision,
      anomaly_details jsonb,
      ai_analysis text,
      ai_analysis_metric_value double precision,
      CHECK ((status = 'cleared') = (cleared_at IS NOT NULL))
    )`,
    // One open alert per (type, rule, metric, connection, database, object): enforced here, not in any alerter's memory.
    `CREATE UNIQUE INDEX alerts_one_open_per_key ON alerts (alert_type, coalesce(rule_id, 0), metric_name, connection_id, database_name, object_name) WHERE cleared_at IS NULL`,
    `CREATE INDEX alerts_triggered ON alerts (triggered_at DESC)`,
    `CREATE INDEX alerts_cleared_recently ON alerts (connection_id, cleared_at) WHERE cleared_at IS NOT NULL`,
    `CREATE TABLE alert_acknowledgments (
      id bigserial PRIMARY KEY,
      alert_id bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
      acknowledged_by text NOT NULL,
      acknowledged_at timestamptz NOT NULL DEFAULT now(),
      message text NOT NULL DEFAULT '',
      false_positive boolean NOT NULL DEFAULT false
    )`,
    `CREATE INDEX alert_acknowledgments_alert ON alert_acknowledgments (alert_id, acknowledged_at DESC)`,
    `CREATE TABLE metric_baselines (
      connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      database_name text NOT NULL DEFAULT '',
      metric_name text NOT NULL,
      period_type text NOT NULL CHECK (period_type IN ('all', 'hourly', 'daily')),
      period_value integer NOT NULL DEFAULT 0,
      mean double precision NOT NULL,
      stddev double precision NOT NULL,
      min double precision NOT NULL,
      max double precision NOT NULL,
      p50 double precision,
      p95 double precision,
      p99 double precision,
      sample_count integer NOT NULL,
      calculated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (connection_id, database_name, metric_name, period_type, period_value)
    )`,
    `CREATE TABLE alerter_settings (
      id integer PRIMARY KEY CHECK (id = 1),
      retention_days integer NOT NULL DEFAULT 90,
      anomaly_enabled boolean NOT NULL DEFAULT true,
      anomaly_sensitivity double precision NOT NULL DEFAULT 3.0,
      baseline_refresh_minutes integer NOT NULL DEFAULT 60,
      cooldown_seconds integer NOT NULL DEFAULT 300
    )`,
    `INSERT INTO alerter_settings (id) VALUES (1)`,
    ...MCP_PRIVILEGES.filter((p) => ["list_alerts", "get_alert_rules"].includes(p.identifier)).map(
      (p) =>
        `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
    ),
  ],
};
