/**
 * The registry of alert metrics: what each rule's `metric_name` means in pglens's samples. One small
 * definition per metric, a pure function of the latest sample of the probes it reads (plus the previous one
 * for changes, which go through the same reset-aware differencing as the metrics query). A new rule on a new
 * measurement = one entry here and one row in builtin-rules.ts.
 */
import { intervalsFor } from "../metrics/intervals.ts";
import type { Row, Sample } from "../metrics/samples.ts";
import { findProbe } from "../probes/index.ts";

export interface Reading {
  database_name: string;
  object_name: string;
  value: number;
}

/** What a metric sees of one connection: the current (recent enough) samples and the probes' schedule. */
export interface MetricInput {
  now: number;
  latest(probe: string): Sample | undefined;
  /** The sample before the latest, when the two are close enough to difference (no gap). */
  previous(probe: string): Sample | undefined;
  /** Enabled probes with their interval and last successful run (epoch ms, or null when never). */
  schedule: ReadonlyArray<{ probe: string; intervalSeconds: number; lastSuccess: number | null }>;
}

/** Which rows of a probe a metric reads (AlertMetric.rows). */
export interface RowFilter {
  /** SQL on the columns the metric lists: true for every row the metric reads (it may be true for more). */
  where: string;
  /**
   * Besides, a row of each value of this column in a sample, with that column only (the others null): for a
   * reading per value where no row passes `where` (a count of 0).
   */
  onePer?: string;
}

export interface AlertMetric {
  name: string;
  /** Probes whose samples it reads (loaded for each round). */
  probes: readonly string[];
  /**
   * The only columns of its probes it reads (entity keys included: none is loaded unlisted), besides the reset
   * markers of these columns: the alerter then loads just these (a probe's every column is loaded for a metric without the list). Worth it
   * for large samples: pg_stat_statements' thousand statements with their text, every table of every database.
   */
  columns?: readonly string[];
  /** It reads only the latest sample of its probes, never `previous`: the alerter then loads one sample, not two. */
  latestOnly?: boolean;
  /**
   * Per probe, the rows it reads when they are few of many: the alerter then loads only rows some filter keeps,
   * where every metric reading the probe lists its columns, reads only the latest sample and has a filter for it.
   * The metric must measure the same on the kept rows as on all, and nothing on a sample none of whose rows is kept.
   */
  rows?: Readonly<Record<string, RowFilter>>;
  /** Set when pglens does not collect what the metric needs: rules on it are kept but never evaluated. */
  unavailable?: string;
  measure(input: MetricInput): Reading[];
}

const num = (v: unknown): number | null => (v === null || v === undefined || v === "" ? null : Number.isFinite(Number(v)) ? Number(v) : null);
const ms = (v: unknown): number | null => (v === null || v === undefined ? null : v instanceof Date ? v.getTime() : Date.parse(String(v)));
const server = (value: number | null, object_name = ""): Reading[] => (value === null ? [] : [{ database_name: "", object_name, value }]);

const CLIENT = (r: Row) => r.backend_type === "client backend";

/** Seconds from `column` to the sample time, the largest over the rows that match; 0 when none does. */
function longest(input: MetricInput, column: string, match: (r: Row) => boolean): Reading[] {
  const sample = input.latest("pg_stat_activity");
  if (!sample) return [];
  let max = 0;
  for (const r of sample.rows) {
    const since = ms(r[column]);
    if (match(r) && since !== null) max = Math.max(max, (sample.t - since) / 1000);
  }
  return server(Math.round(max));
}

const count = (input: MetricInput, probe: string, match: (r: Row) => boolean): Reading[] => {
  const sample = input.latest(probe);
  return sample ? server(sample.rows.filter(match).length) : [];
};

function setting(input: MetricInput, name: string): number | null {
  return num(input.latest("pg_settings")?.rows.find((r) => r.name === name)?.setting);
}

/** Reset-aware change of `column` over the last interval, per database (or once for server-wide probes). */
function change(input: MetricInput, probeName: string, column: string, perDatabase: boolean): Reading[] {
  const probe = findProbe(probeName)!;
  const latest = input.latest(probeName);
  const previous = input.previous(probeName);
  if (!latest || !previous) return [];
  const databases = perDatabase ? [...new Set(latest.rows.map((r) => String(r.database_name)))] : [""];
  const readings: Reading[] = [];
  for (const database of databases) {
    const only = (s: Sample): Sample => (perDatabase ? { t: s.t, rows: s.rows.filter((r) => r.database_name === database) } : s);
    const [interval] = intervalsFor(probe, column, [only(previous), only(latest)]);
    if (interval?.change !== null && interval?.change !== undefined) readings.push({ database_name: database, object_name: "", value: interval.change });
  }
  return readings;
}

/** An LSN `X/Y` as a byte position (exact to 2^53, enough for any real WAL). */
const lsn = (v: unknown): number | null => {
  const m = /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(String(v ?? ""));
  return m ? parseInt(m[1], 16) * 2 ** 32 + parseInt(m[2], 16) : null;
};

const MIN_CACHE_BLOCKS = 10_000;
/** Also the predicate of the datastore's index pg_stat_statements_slow (migration 44): change both together. */
const SLOW_STATEMENT_MS = 1000;
const MIN_TABLE_ROWS = 1000;
const XID_WRAP = 2 ** 31;

const NOT_COLLECTED = (what: string) => `pglens does not collect ${what}`;
/** How a DBA gets the system_stats extension onto a monitored server. */
export const SYSTEM_STATS_HOWTO =
  "system_stats is an open-source extension (github.com/EnterpriseDB/system_stats): install its package for the server's PostgreSQL version " +
  "(e.g. postgresql-17-system-stats from the PGDG repositories) or build it, then run CREATE EXTENSION system_stats in the database pglens connects to";
/** Tables smaller than this (8 MiB) never raise table_bloat_ratio. */
export const MIN_BLOAT_TABLE_BYTES = 8 * 1024 * 1024;

/** What the metrics on sessions, settings and tables read of their probes (AlertMetric.columns). */
const SESSION = ["backend_type", "state", "wait_event_type", "query_start", "xact_start", "state_change"];
const SETTING = ["name", "setting"];
const TABLE = ["database_name", "schemaname", "relname", "n_live_tup", "n_dead_tup"];
const MAX_CONNECTIONS_ROW = { pg_settings: { where: "name = 'max_connections'" } };

export const ALERT_METRICS: readonly AlertMetric[] = [
  {
    name: "pg_settings.max_connections",
    probes: ["pg_settings"],
    columns: SETTING,
    latestOnly: true,
    rows: MAX_CONNECTIONS_ROW,
    measure: (i) => server(setting(i, "max_connections")),
  },
  {
    name: "connection_utilization_percent",
    probes: ["pg_stat_activity", "pg_settings"],
    columns: [...SESSION, ...SETTING],
    latestOnly: true,
    rows: MAX_CONNECTIONS_ROW,
    measure(i) {
      const max = setting(i, "max_connections");
      const sessions = i.latest("pg_stat_activity")?.rows.filter(CLIENT).length;
      return max && sessions !== undefined ? server((sessions / max) * 100) : [];
    },
  },
  { name: "pg_stat_activity.count", probes: ["pg_stat_activity"], columns: SESSION, latestOnly: true, measure: (i) => count(i, "pg_stat_activity", CLIENT) },
  {
    name: "pg_stat_replication.lag_bytes",
    probes: ["pg_stat_replication"],
    measure: (i) =>
      (i.latest("pg_stat_replication")?.rows ?? [])
        .filter((r) => r.role === "primary" && lsn(r.sent_lsn) !== null && lsn(r.replay_lsn) !== null)
        .map((r) => ({ database_name: "", object_name: String(r.application_name || r.client_addr || r.pid), value: lsn(r.sent_lsn)! - lsn(r.replay_lsn)! })),
  },
  {
    name: "pg_replication_slots.inactive",
    probes: ["pg_replication_slots"],
    measure: (i) =>
      (i.latest("pg_replication_slots")?.rows ?? []).map((r) => ({
        database_name: "",
        object_name: String(r.slot_name),
        value: r.active === true || r.active === "true" ? 0 : 1,
      })),
  },
  {
    // On a standby: its WAL receiver is not streaming from the primary.
    name: "pg_stat_replication.standby_disconnected",
    probes: ["pg_stat_replication"],
    measure: (i) =>
      (i.latest("pg_stat_replication")?.rows ?? [])
        .filter((r) => r.role === "standby")
        .map((r) => ({ database_name: "", object_name: String(r.sender_host ?? ""), value: r.receiver_status === "streaming" ? 0 : 1 })),
  },
  {
    name: "pg_node_role.subscription_worker_down",
    probes: ["pg_stat_subscription"],
    measure: (i) =>
      (i.latest("pg_stat_subscription")?.rows ?? [])
        .filter((r) => r.relid === null && (r.worker_type ?? "apply") === "apply")
        .map((r) => ({ database_name: "", object_name: String(r.subname), value: r.pid === null ? 1 : 0 })),
  },
  {
    name: "pg_sys_disk_info.used_percent",
    probes: ["pg_sys_disk_info"],
    measure: (i) =>
      (i.latest("pg_sys_disk_info")?.rows ?? [])
        .filter((r) => (num(r.total_space) ?? 0) > 0)
        .map((r) => ({ database_name: "", object_name: String(r.mount_point), value: (num(r.used_space)! / num(r.total_space)!) * 100 })),
  },
  {
    name: "table_bloat_ratio",
    probes: ["pg_table_bloat"],
    // Small tables are left out: a few spare pages read as a large percentage and cost nothing.
    measure: (i) =>
      (i.latest("pg_table_bloat")?.rows ?? []).flatMap((r) =>
        (num(r.table_bytes) ?? 0) < MIN_BLOAT_TABLE_BYTES || num(r.bloat_ratio) === null
          ? []
          : [{ database_name: String(r.database_name), object_name: `${r.schemaname}.${r.relname}`, value: num(r.bloat_ratio)! }],
      ),
  },
  {
    name: "pg_sys_cpu_usage_info.processor_time_percent",
    probes: ["pg_sys_cpu_usage_info"],
    // processor_time_percent is Windows-only: elsewhere the busy share is what is not idle.
    measure(i) {
      const r = i.latest("pg_sys_cpu_usage_info")?.rows[0];
      const idle = num(r?.idle_mode_percent);
      return server(num(r?.processor_time_percent) ?? (idle === null ? null : 100 - idle));
    },
  },
  {
    name: "pg_sys_memory_info.used_percent",
    probes: ["pg_sys_memory_info"],
    measure(i) {
      const r = i.latest("pg_sys_memory_info")?.rows[0];
      const total = num(r?.total_memory);
      return r && total ? server((num(r.used_memory)! / total) * 100) : [];
    },
  },
  {
    name: "pg_sys_load_avg_info.load_avg_fifteen_minutes",
    probes: ["pg_sys_load_avg_info"],
    measure: (i) => server(num(i.latest("pg_sys_load_avg_info")?.rows[0]?.load_avg_fifteen_minutes)),
  },
  {
    name: "pg_stat_activity.max_query_duration_seconds",
    probes: ["pg_stat_activity"],
    columns: SESSION,
    latestOnly: true,
    measure: (i) => longest(i, "query_start", (r) => CLIENT(r) && r.state === "active"),
  },
  {
    name: "pg_stat_activity.blocked_count",
    probes: ["pg_stat_activity"],
    columns: SESSION,
    latestOnly: true,
    measure: (i) => count(i, "pg_stat_activity", (r) => r.wait_event_type === "Lock"),
  },
  {
    name: "pg_stat_activity.max_xact_duration_seconds",
    probes: ["pg_stat_activity"],
    columns: SESSION,
    latestOnly: true,
    measure: (i) => longest(i, "xact_start", CLIENT),
  },
  {
    name: "pg_stat_activity.idle_in_transaction_seconds",
    probes: ["pg_stat_activity"],
    columns: SESSION,
    latestOnly: true,
    measure: (i) => longest(i, "state_change", (r) => String(r.state).startsWith("idle in transaction")),
  },
  {
    name: "age_percent",
    probes: ["pg_database"],
    measure: (i) =>
      (i.latest("pg_database")?.rows ?? [])
        .filter((r) => num(r.age_datfrozenxid) !== null)
        .map((r) => ({ database_name: String(r.datname), object_name: "", value: (num(r.age_datfrozenxid)! / XID_WRAP) * 100 })),
  },
  { name: "pg_stat_database.deadlocks_delta", probes: ["pg_stat_database"], measure: (i) => change(i, "pg_stat_database", "deadlocks", true) },
  // Time in the current state of backends waiting on a lock (pg_stat_activity has no lock-wait start).
  {
    name: "pg_stat_activity.max_lock_wait_seconds",
    probes: ["pg_stat_activity"],
    columns: SESSION,
    latestOnly: true,
    measure: (i) => longest(i, "state_change", (r) => r.wait_event_type === "Lock"),
  },
  {
    name: "pg_stat_checkpointer.checkpoints_req_delta",
    probes: ["pg_stat_checkpointer"],
    measure: (i) => change(i, "pg_stat_checkpointer", "num_requested", false),
  },
  // pg_stat_archiver's columns are collected with pg_stat_wal.
  { name: "pg_stat_archiver.failed_count_delta", probes: ["pg_stat_wal"], measure: (i) => change(i, "pg_stat_wal", "failed_count", false) },
  {
    // Tables past autovacuum's default trigger (50 rows + 20% dead): hours since their last vacuum of any kind.
    name: "table_last_autovacuum_hours",
    probes: ["pg_stat_all_tables"],
    columns: [...TABLE, "last_autovacuum", "last_vacuum"],
    latestOnly: true,
    // More than 50 dead rows is needed (and not enough) to be past the trigger; a table never vacuumed has no reading.
    rows: { pg_stat_all_tables: { where: "n_dead_tup > 50 AND (last_autovacuum IS NOT NULL OR last_vacuum IS NOT NULL)" } },
    measure(i) {
      const sample = i.latest("pg_stat_all_tables");
      if (!sample) return [];
      return sample.rows.flatMap((r) => {
        const live = num(r.n_live_tup) ?? 0;
        const dead = num(r.n_dead_tup) ?? 0;
        const last = Math.max(ms(r.last_autovacuum) ?? 0, ms(r.last_vacuum) ?? 0);
        if (dead <= 50 + 0.2 * live || last === 0) return [];
        return [{ database_name: String(r.database_name), object_name: `${r.schemaname}.${r.relname}`, value: (sample.t - last) / 3_600_000 }];
      });
    },
  },
  {
    name: "pg_stat_all_tables.dead_tuple_percent",
    probes: ["pg_stat_all_tables"],
    columns: TABLE,
    latestOnly: true,
    rows: { pg_stat_all_tables: { where: `coalesce(n_live_tup, 0) + coalesce(n_dead_tup, 0) >= ${MIN_TABLE_ROWS}` } },
    measure: (i) =>
      (i.latest("pg_stat_all_tables")?.rows ?? []).flatMap((r) => {
        const live = num(r.n_live_tup) ?? 0;
        const dead = num(r.n_dead_tup) ?? 0;
        return live + dead < MIN_TABLE_ROWS
          ? []
          : [{ database_name: String(r.database_name), object_name: `${r.schemaname}.${r.relname}`, value: (100 * dead) / (live + dead) }];
      }),
  },
  {
    name: "pg_stat_statements.slow_query_count",
    probes: ["pg_stat_statements"],
    columns: ["database_name", "mean_exec_time"],
    latestOnly: true,
    rows: { pg_stat_statements: { where: `mean_exec_time > ${SLOW_STATEMENT_MS}`, onePer: "database_name" } },
    measure(i) {
      const sample = i.latest("pg_stat_statements");
      if (!sample) return [];
      const perDatabase = new Map<string, number>();
      for (const r of sample.rows) {
        const database = String(r.database_name);
        perDatabase.set(database, (perDatabase.get(database) ?? 0) + ((num(r.mean_exec_time) ?? 0) > SLOW_STATEMENT_MS ? 1 : 0));
      }
      return [...perDatabase].map(([database_name, value]) => ({ database_name, object_name: "", value }));
    },
  },
  {
    // Per interval, not since the last reset: hits / (hits + reads) of the last interval's changes.
    name: "pg_stat_database.cache_hit_ratio",
    probes: ["pg_stat_database"],
    measure(i) {
      const hits = new Map(change(i, "pg_stat_database", "blks_hit", true).map((r) => [r.database_name, r.value]));
      return change(i, "pg_stat_database", "blks_read", true).flatMap((read) => {
        const hit = hits.get(read.database_name);
        if (hit === undefined || hit + read.value < MIN_CACHE_BLOCKS) return [];
        return [{ database_name: read.database_name, object_name: "", value: (100 * hit) / (hit + read.value) }];
      });
    },
  },
  { name: "pg_stat_database.temp_files_delta", probes: ["pg_stat_database"], measure: (i) => change(i, "pg_stat_database", "temp_files", true) },
  {
    name: "probe_staleness_ratio",
    probes: [],
    measure: (i) =>
      i.schedule
        .filter((s) => s.lastSuccess !== null)
        .map((s) => ({ database_name: "", object_name: s.probe, value: (i.now - s.lastSuccess!) / 1000 / s.intervalSeconds })),
  },
  { name: "spock_exception_log.recent_count", probes: [], unavailable: NOT_COLLECTED("Spock replication state"), measure: () => [] },
  { name: "spock_resolutions.recent_count", probes: [], unavailable: NOT_COLLECTED("Spock replication state"), measure: () => [] },
  {
    name: "pg_replication_slots.max_retained_bytes",
    probes: ["pg_replication_slots"],
    measure: (i) =>
      (i.latest("pg_replication_slots")?.rows ?? [])
        .filter((r) => num(r.retained_bytes) !== null)
        .map((r) => ({ database_name: "", object_name: String(r.slot_name), value: num(r.retained_bytes)! })),
  },
];

export const findAlertMetric = (name: string) => ALERT_METRICS.find((m) => m.name === name);
