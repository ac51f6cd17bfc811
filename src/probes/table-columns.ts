/** Columns shared by pg_stat_all_tables and pg_stat_user_tables (each joined with its statio view). */
import { counter, dim, gauge, timestamp } from "./columns.ts";
import type { ProbeColumn } from "./types.ts";

export const TABLE_KEYS = ["database_name", "schemaname", "relname"] as const;

export const TABLE_COLUMNS: ProbeColumn[] = [
  dim("database_name", "Database the sample was taken in"),
  dim("schemaname", "Schema of the table"),
  dim("relname", "Name of the table"),
  dim("relid", "OID of the table", "oid"),
  counter("seq_scan", "Sequential scans"),
  counter("seq_tup_read", "Live rows fetched by sequential scans"),
  counter("idx_scan", "Index scans"),
  counter("idx_tup_fetch", "Live rows fetched by index scans"),
  counter("n_tup_ins", "Rows inserted"),
  counter("n_tup_upd", "Rows updated"),
  counter("n_tup_del", "Rows deleted"),
  counter("n_tup_hot_upd", "Rows HOT updated"),
  gauge("n_live_tup", "Estimated live rows"),
  gauge("n_dead_tup", "Estimated dead rows"),
  gauge("n_mod_since_analyze", "Rows modified since the last analyze"),
  timestamp("last_vacuum", "Last manual vacuum"),
  timestamp("last_autovacuum", "Last autovacuum"),
  timestamp("last_analyze", "Last manual analyze"),
  timestamp("last_autoanalyze", "Last autoanalyze"),
  counter("vacuum_count", "Manual vacuums"),
  counter("autovacuum_count", "Autovacuums"),
  counter("analyze_count", "Manual analyzes"),
  counter("autoanalyze_count", "Autoanalyzes"),
  counter("heap_blks_read", "Heap blocks read from disk"),
  counter("heap_blks_hit", "Heap buffer hits"),
  counter("idx_blks_read", "Index blocks read from disk"),
  counter("idx_blks_hit", "Index buffer hits"),
  counter("toast_blks_read", "TOAST blocks read from disk"),
  counter("toast_blks_hit", "TOAST buffer hits"),
  counter("tidx_blks_read", "TOAST index blocks read from disk"),
  counter("tidx_blks_hit", "TOAST index buffer hits"),
];

/** Table statistics joined with their block I/O, from the `all` or `user` views. */
export function tableStatsSql(which: "all" | "user"): string {
  return `SELECT t.schemaname, t.relname, t.relid, t.seq_scan, t.seq_tup_read, t.idx_scan, t.idx_tup_fetch, t.n_tup_ins, t.n_tup_upd, t.n_tup_del,
                 t.n_tup_hot_upd, t.n_live_tup, t.n_dead_tup, t.n_mod_since_analyze, t.last_vacuum, t.last_autovacuum, t.last_analyze,
                 t.last_autoanalyze, t.vacuum_count, t.autovacuum_count, t.analyze_count, t.autoanalyze_count, io.heap_blks_read, io.heap_blks_hit,
                 io.idx_blks_read, io.idx_blks_hit, io.toast_blks_read, io.toast_blks_hit, io.tidx_blks_read, io.tidx_blks_hit
            FROM pg_stat_${which}_tables t LEFT JOIN pg_statio_${which}_tables io USING (relid)`;
}
