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
};
