/**
 * The server page's charts: each one metrics query of the public API (one request per chart). `ratio` charts
 * draw a share computed in the browser from two rates (the cache hit percentage from hits and reads per second).
 */
export interface ChartSpec {
  id: string;
  title: string;
  probe: string;
  metrics: string[];
  /** What the y axis counts, as a person reads it. */
  unit: string;
  /** Whether "per database" splits it (group_by=database_name); server-wide probes cannot be. */
  perDatabase: boolean;
  ratio?: { part: string; rest: string };
  /** Drawn only when the server has samples of the probe (replication exists only on some servers). */
  onlyWithSamples?: boolean;
}

export const SERVER_CHARTS: readonly ChartSpec[] = [
  {
    id: "transactions",
    title: "Transactions per second",
    probe: "pg_stat_database",
    metrics: ["xact_commit_per_sec", "xact_rollback_per_sec"],
    unit: "/s",
    perDatabase: true,
  },
  {
    id: "sessions",
    title: "Sessions by state",
    probe: "pg_stat_database",
    metrics: ["active_time_sessions", "idle_in_transaction_time_sessions", "session_time_sessions"],
    unit: "sessions",
    perDatabase: true,
  },
  {
    id: "cache-hit",
    title: "Cache hit %",
    probe: "pg_stat_database",
    metrics: ["blks_hit_per_sec", "blks_read_per_sec"],
    unit: "%",
    perDatabase: true,
    ratio: { part: "blks_hit_per_sec", rest: "blks_read_per_sec" },
  },
  { id: "read-time", title: "Block read time %", probe: "pg_stat_database", metrics: ["blk_read_time_pct"], unit: "%", perDatabase: true },
  { id: "wal", title: "WAL bytes per second", probe: "pg_stat_wal", metrics: ["wal_bytes_per_sec"], unit: "B/s", perDatabase: false },
  { id: "temp", title: "Temporary file bytes per second", probe: "pg_stat_database", metrics: ["temp_bytes_per_sec"], unit: "B/s", perDatabase: true },
  {
    id: "replication-lag",
    title: "Replication replay lag",
    probe: "pg_stat_replication",
    metrics: ["replay_lag"],
    unit: "s",
    perDatabase: false,
    onlyWithSamples: true,
  },
  {
    id: "deadlocks",
    title: "Deadlocks and recovery conflicts",
    probe: "pg_stat_database",
    metrics: ["deadlocks_delta", "conflicts_delta"],
    unit: "per bucket",
    perDatabase: true,
  },
];
