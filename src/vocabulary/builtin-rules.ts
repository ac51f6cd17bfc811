/**
 * The built-in alert rules (the predecessor's set of 34, same names, metrics and defaults). Seeded at every
 * start-up: missing rules are inserted by name, existing ones are never touched, so a user's edits stay.
 */
import type { Queryable } from "../../drivers/types.ts";

export const OPERATORS = [">", ">=", "<", "<=", "==", "!="] as const;
export type Operator = (typeof OPERATORS)[number];
export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface BuiltInRule {
  name: string;
  category: string;
  metric: string;
  operator: Operator;
  threshold: number;
  severity: Severity;
  unit: string | null;
  extension: string | null;
  description: string;
}

const rule = (name: string, category: string, metric: string, operator: Operator, threshold: number, severity: Severity, unit: string | null, extension: string | null, description: string): BuiltInRule => ({
  name, category, metric, operator, threshold, severity, unit, extension, description,
});

export const BUILT_IN_RULES: readonly BuiltInRule[] = [
  rule("high_max_connections", "connections", "pg_settings.max_connections", ">", 500, "warning", "connections", null, "max_connections is set very high; each connection costs memory"),
  rule("connection_utilization", "connections", "connection_utilization_percent", ">", 80, "warning", "percent", null, "Client sessions use most of max_connections"),
  rule("session_count_anomaly", "connections", "pg_stat_activity.count", ">", 200, "warning", "sessions", null, "Unusually many client sessions"),
  rule("replication_lag_bytes", "replication", "pg_stat_replication.lag_bytes", ">", 104857600, "warning", "bytes", null, "A standby has not replayed a large amount of WAL the primary sent"),
  rule("replication_slot_inactive", "replication", "pg_replication_slots.inactive", "==", 1, "critical", null, null, "A replication slot has no consumer; it retains WAL until one returns"),
  rule("replication_standby_disconnected", "replication", "pg_stat_replication.standby_disconnected", "==", 1, "critical", null, null, "This standby's WAL receiver is not streaming from its primary"),
  rule("subscription_worker_down", "replication", "pg_node_role.subscription_worker_down", "==", 1, "critical", null, null, "A logical subscription has no running apply worker"),
  rule("disk_usage_percent", "storage", "pg_sys_disk_info.used_percent", ">", 80, "warning", "percent", "system_stats", "A file system is filling up"),
  rule("disk_usage_critical", "storage", "pg_sys_disk_info.used_percent", ">", 95, "critical", "percent", "system_stats", "A file system is almost full"),
  rule("table_bloat_ratio", "storage", "table_bloat_ratio", ">", 50, "warning", "percent", null, "A table holds much more space than its live rows need"),
  rule("cpu_usage_high", "performance", "pg_sys_cpu_usage_info.processor_time_percent", ">", 80, "warning", "percent", "system_stats", "The host's processors are busy"),
  rule("memory_usage_high", "performance", "pg_sys_memory_info.used_percent", ">", 85, "warning", "percent", "system_stats", "The host's memory is mostly in use"),
  rule("load_average_high", "performance", "pg_sys_load_avg_info.load_avg_fifteen_minutes", ">", 4, "warning", "load average", "system_stats", "The host's 15-minute load average is high"),
  rule("long_running_queries", "performance", "pg_stat_activity.max_query_duration_seconds", ">", 600, "warning", "seconds", null, "A statement has been running for a long time"),
  rule("blocked_queries", "performance", "pg_stat_activity.blocked_count", ">", 5, "warning", "queries", null, "Several sessions wait on locks"),
  rule("long_running_transaction", "transactions", "pg_stat_activity.max_xact_duration_seconds", ">", 3600, "warning", "seconds", null, "A transaction has been open for a long time, holding back vacuum"),
  rule("idle_in_transaction", "transactions", "pg_stat_activity.idle_in_transaction_seconds", ">", 300, "warning", "seconds", null, "A session sits idle inside an open transaction"),
  rule("transaction_wraparound", "transactions", "age_percent", ">", 75, "critical", "percent", null, "A database's oldest unfrozen transaction id nears wraparound"),
  rule("deadlocks_detected", "locks", "pg_stat_database.deadlocks_delta", ">", 0, "warning", "deadlocks", null, "Deadlocks occurred in the last interval"),
  rule("lock_wait_time", "locks", "pg_stat_activity.max_lock_wait_seconds", ">", 30, "warning", "seconds", null, "A session has waited on a lock for a long time"),
  rule("checkpoint_warning", "wal", "pg_stat_checkpointer.checkpoints_req_delta", ">", 50, "warning", "checkpoints", null, "Many requested checkpoints in the last interval; max_wal_size may be too small"),
  rule("wal_archive_failed", "wal", "pg_stat_archiver.failed_count_delta", ">", 0, "critical", "failures", null, "WAL archiving failed in the last interval"),
  rule("autovacuum_not_running", "maintenance", "table_last_autovacuum_hours", ">", 1, "warning", "hours", null, "A table past autovacuum's trigger has not been vacuumed for hours"),
  rule("dead_tuple_ratio", "maintenance", "pg_stat_all_tables.dead_tuple_percent", ">", 20, "warning", "percent", null, "A table holds a high share of dead rows"),
  rule("slow_query_count", "queries", "pg_stat_statements.slow_query_count", ">", 10, "warning", "queries", "pg_stat_statements", "Many statements average over a second per call"),
  rule("cache_hit_ratio_low", "queries", "pg_stat_database.cache_hit_ratio", "<", 80, "warning", "percent", null, "Many block reads in the last interval missed the buffer cache"),
  rule("temp_files_created", "performance", "pg_stat_database.temp_files_delta", ">", 100, "warning", "files", null, "Many temporary files in the last interval; work_mem may be too small"),
  rule("metric_staleness", "availability", "probe_staleness_ratio", ">", 3, "warning", "ratio", null, "A probe has not delivered a sample for several of its intervals"),
  rule("spock_recent_exceptions_present", "replication", "spock_exception_log.recent_count", ">=", 1, "warning", "exceptions", "spock", "Spock logged replication exceptions recently"),
  rule("spock_recent_exceptions_high", "replication", "spock_exception_log.recent_count", ">=", 10, "critical", "exceptions", "spock", "Spock logged many replication exceptions recently"),
  rule("spock_recent_resolutions_present", "replication", "spock_resolutions.recent_count", ">=", 1, "warning", "resolutions", "spock", "Spock resolved replication conflicts recently"),
  rule("spock_recent_resolutions_high", "replication", "spock_resolutions.recent_count", ">=", 25, "critical", "resolutions", "spock", "Spock resolved many replication conflicts recently"),
  rule("replication_slot_retention_warn", "replication", "pg_replication_slots.max_retained_bytes", ">=", 1073741824, "warning", "bytes", null, "A replication slot retains over 1 GiB of WAL"),
  rule("replication_slot_retention_high", "replication", "pg_replication_slots.max_retained_bytes", ">=", 10737418240, "critical", "bytes", null, "A replication slot retains over 10 GiB of WAL"),
];

/** Inserts the built-in rules that are missing; never overwrites a rule that exists. */
export async function seedBuiltInRules(db: Queryable): Promise<void> {
  const r = BUILT_IN_RULES;
  await db.query(
    `INSERT INTO alert_rules (name, category, metric_name, default_operator, default_threshold, default_severity, metric_unit, required_extension, description, is_built_in)
     SELECT *, true FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::text[], $7::text[], $8::text[], $9::text[])
     ON CONFLICT (name) DO NOTHING`,
    [r.map((x) => x.name), r.map((x) => x.category), r.map((x) => x.metric), r.map((x) => x.operator), r.map((x) => x.threshold), r.map((x) => x.severity), r.map((x) => x.unit), r.map((x) => x.extension), r.map((x) => x.description)],
  );
}
