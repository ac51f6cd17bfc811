import { counter, dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatDatabaseConflicts: ProbeDefinition = {
  name: "pg_stat_database_conflicts",
  description: "Per-database queries cancelled on a standby by recovery conflicts",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["database_name"],
  columns: [
    dim("database_name", "Database the sample was taken in"),
    dim("datid", "OID of the database", "oid"),
    dim("datname", "Name of the database"),
    counter("confl_tablespace", "Queries cancelled because of dropped tablespaces"),
    counter("confl_lock", "Queries cancelled because of lock timeouts"),
    counter("confl_snapshot", "Queries cancelled because of old snapshots"),
    counter("confl_bufferpin", "Queries cancelled because of pinned buffers"),
    counter("confl_deadlock", "Queries cancelled because of deadlocks"),
    counter("confl_active_logicalslot", "Logical slots invalidated by conflicts (PostgreSQL 16+)"),
  ],
  collect: {
    runs: "each_database",
    sql: (major) => [
      `SELECT datid, datname, confl_tablespace, confl_lock, confl_snapshot, confl_bufferpin, confl_deadlock,
              ${major >= 16 ? "confl_active_logicalslot" : "NULL::bigint AS confl_active_logicalslot"}
         FROM pg_stat_database_conflicts WHERE datname = current_database()`,
    ],
  },
};
