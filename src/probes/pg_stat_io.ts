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
};
