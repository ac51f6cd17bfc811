import { counter, dim, gauge, marker, timeMs, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatIo: ProbeDefinition = {
  name: "pg_stat_io",
  description: "I/O by backend type, object and context (PostgreSQL 16+), plus SLRU caches as backend_type slru",
  scope: "server",
  defaultIntervalSeconds: 900,
  defaultRetentionDays: 7,
  keys: ["backend_type", "object", "context"],
  columns: withResets(
    [
      dim("backend_type", "Type of backend, or slru"),
      dim("object", "Target object (relation, temp relation, wal, or the SLRU name)"),
      dim("context", "Kind of I/O (normal, vacuum, bulkread, bulkwrite, init)"),
      counter("reads", "Read operations"),
      timeMs("read_time", "Time in read operations (ms)"),
      counter("writes", "Write operations"),
      timeMs("write_time", "Time in write operations (ms)"),
      counter("writebacks", "Writeback requests"),
      timeMs("writeback_time", "Time in writeback operations (ms)"),
      counter("extends", "Relation extend operations"),
      timeMs("extend_time", "Time in extend operations (ms)"),
      gauge("op_bytes", "Bytes per I/O operation (null from PostgreSQL 18)"),
      counter("hits", "Buffer hits"),
      counter("evictions", "Buffers evicted"),
      counter("reuses", "Ring buffers reused"),
      counter("fsyncs", "fsync calls"),
      timeMs("fsync_time", "Time in fsync (ms)"),
      counter("blks_zeroed", "SLRU blocks zeroed"),
      counter("blks_exists", "SLRU blocks checked for existence"),
      counter("flushes", "SLRU flushes"),
      counter("truncates", "SLRU truncates"),
      marker("stats_reset"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "server",
    sql: (major) =>
      major < 16
        ? null
        : [
            `SELECT backend_type, object, context, reads, read_time, writes, write_time, writebacks, writeback_time, extends, extend_time,
                    ${major >= 18 ? "NULL::bigint AS op_bytes" : "op_bytes"}, hits, evictions, reuses, fsyncs, fsync_time, stats_reset
               FROM pg_stat_io`,
            `SELECT 'slru' AS backend_type, name AS object, 'normal' AS context, blks_read AS reads, blks_written AS writes, blks_hit AS hits,
                    blks_zeroed, blks_exists, flushes, truncates, stats_reset
               FROM pg_stat_slru`,
          ],
  },
};
