import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgExtension: ProbeDefinition = {
  name: "pg_extension",
  description: "Extensions installed in each database, with their versions",
  scope: "database",
  defaultIntervalSeconds: 3600,
  defaultRetentionDays: 30,
  keys: ["database_name", "extname"],
  columns: [
    dim("database_name", "Database the sample was taken in"),
    dim("extname", "Extension name"),
    dim("extversion", "Installed version"),
    dim("schema_name", "Schema holding the extension's objects"),
  ],
  collect: {
    runs: "each_database",
    sql: () => [`SELECT e.extname, e.extversion, n.nspname AS schema_name FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace`],
  },
};
