import { TABLE_COLUMNS, TABLE_KEYS, tableStatsSql } from "./table-columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatAllTables: ProbeDefinition = {
  name: "pg_stat_all_tables",
  description: "Per-table scans, row changes, live/dead tuples, vacuum/analyze activity and block I/O, system tables included",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: TABLE_KEYS,
  columns: TABLE_COLUMNS,
  collect: { runs: "each_database", sql: () => [tableStatsSql("all")] },
};
