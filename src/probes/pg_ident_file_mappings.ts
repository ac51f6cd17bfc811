import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgIdentFileMappings: ProbeDefinition = {
  name: "pg_ident_file_mappings",
  description: "The user name maps of pg_ident.conf (PostgreSQL 15+; readable by superusers only: elsewhere reported as not available)",
  scope: "server",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 365,
  keys: ["line_number"],
  columns: [
    dim("line_number", "Line of the mapping in its file", "integer"),
    dim("map_name", "Name of the map"),
    dim("sys_name", "Operating-system or external user name (or pattern)"),
    dim("pg_username", "Database user it maps to"),
    dim("error", "Why the line could not be processed, if it could not"),
  ],
  collect: {
    runs: "server",
    sql: (major) => (major >= 15 ? [`SELECT line_number, map_name, sys_name, pg_username, error FROM pg_ident_file_mappings`] : null),
  },
};
