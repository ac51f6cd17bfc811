import { TABLE_COLUMNS, TABLE_KEYS, tableStatsSql } from "./table-columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatUserTables: ProbeDefinition = {
  name: "pg_stat_user_tables",
  description: "Per-table scans, row changes, live/dead tuples, vacuum/analyze activity and block I/O of user tables",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: TABLE_KEYS,
  columns: TABLE_COLUMNS,
  collect: { runs: "each_database", sql: () => [tableStatsSql("user")] },
};
