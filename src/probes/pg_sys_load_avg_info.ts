import { gauge } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgSysLoadAvgInfo: ProbeDefinition = {
  name: "pg_sys_load_avg_info",
  description: "Host load averages (system_stats extension)",
  scope: "system",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: [
    gauge("load_avg_one_minute", "Load average over 1 minute", "real"),
    gauge("load_avg_five_minutes", "Load average over 5 minutes", "real"),
    gauge("load_avg_ten_minutes", "Load average over 10 minutes", "real"),
    gauge("load_avg_fifteen_minutes", "Load average over 15 minutes (null on Linux)", "real"),
  ],
  collect: {
    runs: "server",
    extension: "system_stats",
    sql: () => [`SELECT load_avg_one_minute, load_avg_five_minutes, load_avg_ten_minutes, load_avg_fifteen_minutes FROM pg_sys_load_avg_info()`],
  },
};
