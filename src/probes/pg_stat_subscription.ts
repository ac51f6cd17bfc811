import { counter, dim, marker, timestamp, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatSubscription: ProbeDefinition = {
  name: "pg_stat_subscription",
  description: "Logical replication subscriptions and their apply/sync errors",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["subid"],
  columns: withResets(
    [
      dim("subid", "OID of the subscription", "oid"),
      dim("subname", "Name of the subscription"),
      dim("worker_type", "apply, parallel apply or table synchronization (PostgreSQL 16+)"),
      dim("pid", "Process id of the worker", "integer"),
      dim("leader_pid", "Leader apply worker of a parallel apply worker", "integer"),
      dim("relid", "Table being synchronised", "oid"),
      dim("received_lsn", "Last WAL location received"),
      timestamp("last_msg_send_time", "Send time of the last message"),
      timestamp("last_msg_receipt_time", "Receipt time of the last message"),
      dim("latest_end_lsn", "Last WAL location reported to the publisher"),
      timestamp("latest_end_time", "Time of the last location reported"),
      counter("apply_error_count", "Errors while applying changes"),
      counter("sync_error_count", "Errors during initial table synchronisation"),
      marker("stats_reset"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "server",
    // One row per subscription: its apply worker (table sync and parallel apply workers are left out).
    sql: (major) => [
      major >= 16
        ? `SELECT s.subid, s.subname, s.worker_type, s.pid, s.leader_pid, s.relid, s.received_lsn::text AS received_lsn, s.last_msg_send_time,
                  s.last_msg_receipt_time, s.latest_end_lsn::text AS latest_end_lsn, s.latest_end_time, st.apply_error_count, st.sync_error_count, st.stats_reset
             FROM pg_stat_subscription s LEFT JOIN pg_stat_subscription_stats st USING (subid)
            WHERE s.worker_type IS NULL OR s.worker_type = 'apply'`
        : `SELECT s.subid, s.subname, s.pid, s.relid, s.received_lsn::text AS received_lsn, s.last_msg_send_time, s.last_msg_receipt_time,
                  s.latest_end_lsn::text AS latest_end_lsn, s.latest_end_time
                  ${major >= 15 ? ", st.apply_error_count, st.sync_error_count, st.stats_reset" : ""}
             FROM pg_stat_subscription s ${major >= 15 ? "LEFT JOIN pg_stat_subscription_stats st USING (subid)" : ""}
            WHERE s.relid IS NULL`,
    ],
  },
};
