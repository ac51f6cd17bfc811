import { dim, timestamp } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgPostmaster: ProbeDefinition = {
  name: "pg_postmaster",
  description: "When the server started and last loaded its configuration, and whether it is a standby (restarts show on the timeline)",
  scope: "server",
  defaultIntervalSeconds: 60,
  defaultRetentionDays: 90,
  keys: [],
  columns: [
    timestamp("start_time", "When the server (postmaster) started"),
    timestamp("conf_load_time", "When the configuration files were last loaded"),
    dim("is_in_recovery", "Whether the server is a standby (in recovery)", "boolean"),
    dim("server_version", "Server version"),
  ],
  collect: {
    runs: "server",
    sql: () => [
      `SELECT pg_postmaster_start_time() AS start_time, pg_conf_load_time() AS conf_load_time, pg_is_in_recovery() AS is_in_recovery, current_setting('server_version') AS server_version`,
    ],
  },
};
