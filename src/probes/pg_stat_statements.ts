import { counter, dim, marker, ratio, timeMs, watermark, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

/** The minor number of a 1.x extension version ("1.10" -> 10). */
function extensionMinor(version: string): number {
  const [major, minor] = version.split(".").map(Number);
  return major > 1 ? Number.POSITIVE_INFINITY : (minor ?? 0);
}

export const pgStatStatements: ProbeDefinition = {
  name: "pg_stat_statements",
  description: "Per-statement execution statistics from the pg_stat_statements extension (top statements by total time)",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["database_name", "queryid", "userid", "dbid", "toplevel"],
  // Four gauges' parts were 1.2 of the 2 kB of each statement's hourly cell, the largest table at scale (migration 46).
  gaugeParts: false,
  columns: withResets(
    [
      dim("database_name", "Database the sample was taken in"),
      dim("queryid", "Hash identifying the normalised statement", "bigint"),
      dim("userid", "OID of the user who ran the statement", "oid"),
      dim("dbid", "OID of the database the statement ran in", "oid"),
      dim("toplevel", "Whether the statement ran at top level", "boolean"),
      dim("query", "Text of a representative statement"),
      counter("calls", "Times executed"),
      timeMs("total_exec_time", "Total execution time (ms)"),
      watermark("min_exec_time", "Minimum execution time since reset (ms)"),
      watermark("max_exec_time", "Maximum execution time since reset (ms)"),
      watermark("mean_exec_time", "Mean execution time since reset (ms), a lifetime figure"),
      ratio("stddev_exec_time", "Standard deviation of the execution time since reset (ms)"),
      counter("rows", "Rows retrieved or affected"),
      counter("shared_blks_hit", "Shared buffer hits"),
      counter("shared_blks_read", "Shared blocks read"),
      counter("shared_blks_dirtied", "Shared blocks dirtied"),
      counter("shared_blks_written", "Shared blocks written"),
      counter("local_blks_hit", "Local buffer hits"),
      counter("local_blks_read", "Local blocks read"),
      counter("local_blks_dirtied", "Local blocks dirtied"),
      counter("local_blks_written", "Local blocks written"),
      counter("temp_blks_read", "Temp blocks read"),
      counter("temp_blks_written", "Temp blocks written"),
      timeMs("shared_blk_read_time", "Time reading shared blocks (ms)"),
      timeMs("shared_blk_write_time", "Time writing shared blocks (ms)"),
      timeMs("local_blk_read_time", "Time reading local blocks (ms)"),
      timeMs("local_blk_write_time", "Time writing local blocks (ms)"),
      counter("wal_records", "WAL records generated (extension 1.8+)"),
      counter("wal_fpi", "WAL full page images generated (extension 1.8+)"),
      counter("wal_bytes", "WAL bytes generated (extension 1.8+)", "numeric"),
      marker("stats_reset", "When pg_stat_statements was last reset (pg_stat_statements_info; null where absent)"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "each_database",
    extension: "pg_stat_statements",
    // The view is server-wide: each database stores the statements that ran in it, the 1000 costliest.
    // The columns follow the installed extension version, which can lag the server's (ALTER EXTENSION UPDATE not run).
    sql: (_major, { extensionSchema = "public", extensionVersion = "1.11" }) => {
      const s = `"${extensionSchema.replace(/"/g, '""')}"`;
      const atLeast = (minor: number) => extensionMinor(extensionVersion) >= minor;
      const time = atLeast(8) ? (name: string) => `p.${name}_exec_time` : (name: string) => `p.${name}_time AS ${name}_exec_time`;
      const timings = atLeast(11)
        ? "p.shared_blk_read_time, p.shared_blk_write_time, p.local_blk_read_time, p.local_blk_write_time"
        : "p.blk_read_time AS shared_blk_read_time, p.blk_write_time AS shared_blk_write_time";
      const toplevel = atLeast(9) ? "p.toplevel" : "true AS toplevel";
      const reset = atLeast(9) ? `(SELECT i.stats_reset FROM ${s}.pg_stat_statements_info i)` : "NULL::timestamptz";
      const wal = atLeast(8) ? "p.wal_records, p.wal_fpi, p.wal_bytes" : "NULL::bigint AS wal_records, NULL::bigint AS wal_fpi, NULL::numeric AS wal_bytes";
      return [
        `SELECT p.queryid, p.userid, p.dbid, ${toplevel}, p.query, p.calls, ${["total", "min", "max", "mean", "stddev"].map(time).join(", ")},
                p.rows, p.shared_blks_hit, p.shared_blks_read, p.shared_blks_dirtied, p.shared_blks_written, p.local_blks_hit,
                p.local_blks_read, p.local_blks_dirtied, p.local_blks_written, p.temp_blks_read, p.temp_blks_written, ${timings}, ${wal},
                ${reset} AS stats_reset
           FROM ${s}.pg_stat_statements p
          WHERE p.queryid IS NOT NULL AND p.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          ORDER BY ${time("total").split(" AS ")[0]} DESC LIMIT 1000`,
      ];
    },
  },
};
