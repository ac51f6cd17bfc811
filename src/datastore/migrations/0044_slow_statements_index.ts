import { rawTable } from "../../probes/history-ddl.ts";
import type { Migration } from "./types.ts";

/**
 * The statements slower than a second on average, by sample: the alerter's slow-statement count reads these
 * rows of each server's latest pg_stat_statements sample, not all of its thousand (a million rows at 1,000
 * servers). The predicate is the metric's filter (SLOW_STATEMENT_MS in vocabulary/alert-metrics.ts) as written
 * then; a changed threshold needs an index of its own.
 */
export const migration: Migration = {
  version: 44,
  name: "slow_statements_index",
  statements: [`CREATE INDEX pg_stat_statements_slow ON ${rawTable("pg_stat_statements")} (connection_id, collected_at) WHERE mean_exec_time > 1000`],
};
