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
};
