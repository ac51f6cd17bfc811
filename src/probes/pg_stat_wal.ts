import { counter, dim, marker, timeMs, timestamp, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatWal: ProbeDefinition = {
  name: "pg_stat_wal",
  description: "WAL generation and writes (pg_stat_wal) with WAL archiving (pg_stat_archiver)",
  scope: "server",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: withResets(
    [
      counter("wal_records", "WAL records generated"),
      counter("wal_fpi", "WAL full page images generated"),
      counter("wal_bytes", "WAL bytes generated", "numeric"),
      counter("wal_buffers_full", "Times WAL was written because the buffers were full"),
      counter("wal_write", "WAL buffer writes (null from PostgreSQL 18)"),
      counter("wal_sync", "WAL file syncs (null from PostgreSQL 18)"),
      timeMs("wal_write_time", "Time writing WAL buffers (ms; null from PostgreSQL 18)"),
      timeMs("wal_sync_time", "Time syncing WAL files (ms; null from PostgreSQL 18)"),
      marker("stats_reset", "When the WAL statistics were last reset"),
      counter("archived_count", "WAL files archived"),
      dim("last_archived_wal", "Last WAL file archived"),
      timestamp("last_archived_time", "When the last WAL file was archived"),
      counter("failed_count", "Failed archiving attempts"),
      dim("last_failed_wal", "WAL file of the last failed attempt"),
      timestamp("last_failed_time", "Time of the last failed attempt"),
      marker("archiver_stats_reset", "When the archiver statistics were last reset"),
    ],
    "stats_reset",
    { archived_count: "archiver_stats_reset", failed_count: "archiver_stats_reset" },
  ),
  collect: {
    runs: "server",
    sql: (major) => [
      // PostgreSQL 18 moved WAL write and sync counts and times to pg_stat_io.
      `SELECT w.wal_records, w.wal_fpi, w.wal_bytes, w.wal_buffers_full,
              ${major >= 18 ? "NULL::bigint AS wal_write, NULL::bigint AS wal_sync, NULL::float8 AS wal_write_time, NULL::float8 AS wal_sync_time" : "w.wal_write, w.wal_sync, w.wal_write_time, w.wal_sync_time"},
              w.stats_reset, a.archived_count, a.last_archived_wal, a.last_archived_time, a.failed_count, a.last_failed_wal,
              a.last_failed_time, a.stats_reset AS archiver_stats_reset
         FROM pg_stat_wal w CROSS JOIN pg_stat_archiver a`,
    ],
  },
};
