import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgHbaFileRules: ProbeDefinition = {
  name: "pg_hba_file_rules",
  description: "The client authentication rules of pg_hba.conf (readable by superusers only: elsewhere reported as not available)",
  scope: "server",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 365,
  keys: ["line_number"],
  columns: [
    dim("line_number", "Line of the rule in its file", "integer"),
    dim("file_name", "File holding the rule (PostgreSQL 16+)"),
    dim("type", "Connection type (local, host, hostssl, ...)"),
    dim("database", "Databases the rule matches, comma-separated"),
    dim("user_name", "Users the rule matches, comma-separated"),
    dim("address", "Client address or host name"),
    dim("netmask", "Netmask of the address"),
    dim("auth_method", "Authentication method"),
    dim("options", "Options of the method, comma-separated"),
    dim("error", "Why the line could not be processed, if it could not"),
  ],
  collect: {
    runs: "server",
    sql: (major) => [
      `SELECT line_number, ${major >= 16 ? "file_name" : "NULL::text AS file_name"}, type, array_to_string(database, ',') AS database, array_to_string(user_name, ',') AS user_name,
              address, netmask, auth_method, array_to_string(options, ',') AS options, error
         FROM pg_hba_file_rules`,
    ],
  },
};
