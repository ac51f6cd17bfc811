import { dim, gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgDatabase: ProbeDefinition = {
  name: "pg_database",
  description: "Every database of the server with its size and transaction id age (wraparound risk)",
  scope: "server",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: ["datname"],
  columns: [
    dim("datname", "Name of the database"),
    dim("datdba", "OID of the owner", "oid"),
    dim("encoding", "Character encoding number", "integer"),
    dim("datistemplate", "Whether it is a template", "boolean"),
    dim("datallowconn", "Whether connections are allowed", "boolean"),
    gauge("datconnlimit", "Connection limit (-1: none)", "integer"),
    gauge("age_datfrozenxid", "Age of the oldest unfrozen transaction id", "integer"),
    gauge("age_datminmxid", "Age of the oldest multixact id", "integer"),
    gauge("database_size_bytes", "Size on disk (bytes)"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT datname, datdba, encoding, datistemplate, datallowconn, datconnlimit, age(datfrozenxid) AS age_datfrozenxid,
              mxid_age(datminmxid) AS age_datminmxid,
              CASE WHEN has_database_privilege(datname, 'CONNECT') THEN pg_database_size(datname) END AS database_size_bytes
         FROM pg_database`,
    ],
  },
};
