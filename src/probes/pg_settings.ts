import { dim } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgSettings: ProbeDefinition = {
  name: "pg_settings",
  description: "Server configuration parameters and where each value comes from",
  scope: "server",
  defaultIntervalSeconds: 3600,
  defaultRetentionDays: 365,
  keys: ["name"],
  columns: [
    dim("name", "Parameter name"),
    dim("setting", "Current value"),
    dim("unit", "Unit of the value"),
    dim("category", "Parameter group"),
    dim("short_desc", "Short description"),
    dim("context", "When the parameter can change"),
    dim("vartype", "Parameter type"),
    dim("source", "Where the current value comes from"),
    dim("min_val", "Minimum allowed value"),
    dim("max_val", "Maximum allowed value"),
    dim("boot_val", "Value at server start if not set elsewhere"),
    dim("reset_val", "Value RESET would restore"),
    dim("sourcefile", "Configuration file that set the value"),
    dim("sourceline", "Line in that file", "integer"),
    dim("pending_restart", "Changed in the file but needs a restart", "boolean"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT name, setting, unit, category, short_desc, context, vartype, source, min_val, max_val, boot_val, reset_val,
              sourcefile, sourceline, pending_restart FROM pg_settings`,
    ],
  },
};
