import { counter, dim, gauge, marker, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgReplicationSlots: ProbeDefinition = {
  name: "pg_replication_slots",
  description: "Replication slots, the WAL they retain, and logical decoding spill/stream statistics",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["slot_name"],
  columns: withResets(
    [
      dim("slot_name", "Name of the slot"),
      dim("slot_type", "physical or logical"),
      dim("active", "Whether a consumer is connected", "boolean"),
      dim("wal_status", "reserved, extended, unreserved or lost"),
      gauge("safe_wal_size", "WAL that can still be written before the slot is in danger (bytes)"),
      gauge("retained_bytes", "WAL retained by the slot (bytes)", "numeric"),
      counter("spill_txns", "Transactions spilled to disk"),
      counter("spill_count", "Times transactions were spilled to disk"),
      counter("spill_bytes", "Bytes spilled to disk"),
      counter("stream_txns", "In-progress transactions streamed"),
      counter("stream_count", "Times in-progress transactions were streamed"),
      counter("stream_bytes", "Bytes streamed"),
      counter("total_txns", "Transactions decoded"),
      counter("total_bytes", "Bytes decoded"),
      marker("stats_reset"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "server",
    sql: () => [
      `SELECT s.slot_name, s.slot_type, s.active, s.wal_status, s.safe_wal_size,
              CASE WHEN pg_is_in_recovery() OR s.restart_lsn IS NULL THEN NULL ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn) END AS retained_bytes,
              st.spill_txns, st.spill_count, st.spill_bytes, st.stream_txns, st.stream_count, st.stream_bytes, st.total_txns, st.total_bytes, st.stats_reset
         FROM pg_replication_slots s LEFT JOIN pg_stat_replication_slots st USING (slot_name)`,
    ],
  },
};
