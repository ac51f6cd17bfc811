import { INDEX_COLUMNS, INDEX_KEYS, indexStatsSql } from "./index-columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatUserIndexes: ProbeDefinition = {
  name: "pg_stat_user_indexes",
  description: "Per-index scans, entries read and block I/O of user indexes",
  scope: "database",
  defaultIntervalSeconds: 300,
  defaultRetentionDays: 7,
  keys: INDEX_KEYS,
  columns: INDEX_COLUMNS,
  collect: { runs: "each_database", sql: (major) => [indexStatsSql("user", major)] },
};
