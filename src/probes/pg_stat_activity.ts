import { dim, timestamp } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatActivity: ProbeDefinition = {
  name: "pg_stat_activity",
  description: "One row per server process: who is connected, what runs, what it waits on (pglens' own backend excluded)",
  scope: "server",
  defaultIntervalSeconds: 60,
  defaultRetentionDays: 7,
  keys: ["pid"],
  columns: [
    dim("pid", "Process id of the backend", "integer"),
    dim("datid", "OID of the database", "oid"),
    dim("datname", "Database the backend is connected to"),
    dim("leader_pid", "Process id of the parallel group leader", "integer"),
    dim("usesysid", "OID of the user", "oid"),
    dim("usename", "User name"),
    dim("application_name", "Application name"),
    dim("client_addr", "Client address"),
    dim("client_hostname", "Client host name"),
    dim("client_port", "Client port", "integer"),
    timestamp("backend_start", "When the process started"),
    timestamp("xact_start", "When the current transaction started"),
    timestamp("query_start", "When the current query started"),
    timestamp("state_change", "When the state last changed"),
    dim("wait_event_type", "Type of event waited for"),
    dim("wait_event", "Event waited for"),
    dim("state", "active, idle, idle in transaction, ..."),
    dim("backend_xid", "Top-level transaction id"),
    dim("backend_xmin", "xmin horizon of the backend"),
    dim("query", "Most recent query text"),
    dim("backend_type", "Type of backend"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT pid, datid, datname, leader_pid, usesysid, usename, application_name, client_addr::text AS client_addr, client_hostname, client_port,
              backend_start, xact_start, query_start, state_change, wait_event_type, wait_event, state, backend_xid::text AS backend_xid,
              backend_xmin::text AS backend_xmin, query, backend_type
         FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
    ],
  },
};
