import { counter, dim, gauge, marker, sessionMs, timeMs, timestamp, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatDatabase: ProbeDefinition = {
  name: "pg_stat_database",
  description: "Per-database activity: transactions, block I/O, tuples, temp files, deadlocks, session time",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["database_name"],
  columns: withResets(
    [
      dim("database_name", "Database the sample was taken in"),
      dim("datid", "OID of the database", "oid"),
      dim("datname", "Name of the database"),
      gauge("numbackends", "Backends currently connected to the database", "integer"),
      counter("xact_commit", "Transactions committed"),
      counter("xact_rollback", "Transactions rolled back"),
      counter("blks_read", "Disk blocks read"),
      counter("blks_hit", "Buffer cache hits"),
      counter("tup_returned", "Live rows fetched by sequential scans and index entries returned by index scans"),
      counter("tup_fetched", "Live rows fetched by index scans"),
      counter("tup_inserted", "Rows inserted"),
      counter("tup_updated", "Rows updated"),
      counter("tup_deleted", "Rows deleted"),
      counter("conflicts", "Queries cancelled by recovery conflicts"),
      counter("temp_files", "Temporary files created"),
      counter("temp_bytes", "Bytes written to temporary files"),
      counter("deadlocks", "Deadlocks detected"),
      counter("checksum_failures", "Data page checksum failures"),
      timestamp("checksum_last_failure", "Time of the last checksum failure"),
      timeMs("blk_read_time", "Time spent reading data file blocks (ms)"),
      timeMs("blk_write_time", "Time spent writing data file blocks (ms)"),
      sessionMs("session_time", "Time spent by sessions (ms)"),
      sessionMs("active_time", "Time spent executing statements (ms)"),
      sessionMs("idle_in_transaction_time", "Time spent idle in a transaction (ms)"),
      counter("sessions", "Sessions established"),
      counter("sessions_abandoned", "Sessions ended because the client disconnected"),
      counter("sessions_fatal", "Sessions ended by fatal errors"),
      counter("sessions_killed", "Sessions terminated by operator intervention"),
      marker("stats_reset"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "each_database",
    sql: () => [
      `SELECT datid, datname, numbackends, xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched, tup_inserted, tup_updated,
              tup_deleted, conflicts, temp_files, temp_bytes, deadlocks, checksum_failures, checksum_last_failure, blk_read_time, blk_write_time,
              session_time, active_time, idle_in_transaction_time, sessions, sessions_abandoned, sessions_fatal, sessions_killed, stats_reset
         FROM pg_stat_database WHERE datname = current_database()`,
    ],
  },
};
