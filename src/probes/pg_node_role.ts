import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

/** Where a server stands in physical replication: what the topology's replication clusters are detected from. */
export const pgNodeRole: ProbeDefinition = {
  name: "pg_node_role",
  description:
    "The server's replication role: standby or not, its system identifier (shared by a primary and its physical standbys) and the upstream it streams from",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: [],
  columns: [
    dim("is_in_recovery", "Whether the server is a standby (in recovery)", "boolean"),
    dim("system_identifier", "Identifier of the database system, the same on a primary and its physical standbys"),
    dim("sender_host", "Host this standby's WAL receiver streams from"),
    dim("sender_port", "Port this standby's WAL receiver streams from", "integer"),
    dim("receiver_status", "State of the WAL receiver (streaming, ...)"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT pg_is_in_recovery() AS is_in_recovery, (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier,
              r.sender_host, r.sender_port, r.status AS receiver_status
         FROM (SELECT 1) AS one LEFT JOIN pg_stat_wal_receiver r ON true`,
    ],
  },
};
