/** Columns shared by pg_stat_all_indexes and pg_stat_user_indexes (each joined with its statio view). */
import { counter, dim, timestamp } from "./columns.ts";
import type { ProbeColumn } from "./types.ts";

export const INDEX_KEYS = ["database_name", "schemaname", "indexrelname"] as const;

export const INDEX_COLUMNS: ProbeColumn[] = [
  dim("database_name", "Database the sample was taken in"),
  dim("schemaname", "Schema of the index"),
  dim("indexrelname", "Name of the index"),
  dim("relname", "Table of the index"),
  dim("relid", "OID of the table", "oid"),
  dim("indexrelid", "OID of the index", "oid"),
  counter("idx_scan", "Scans of the index"),
  timestamp("last_idx_scan", "Time of the last scan (PostgreSQL 16+)"),
  counter("idx_tup_read", "Index entries returned by scans"),
  counter("idx_tup_fetch", "Live table rows fetched by simple index scans"),
  counter("idx_blks_read", "Index blocks read from disk"),
  counter("idx_blks_hit", "Index buffer hits"),
];

/** Index statistics joined with their block I/O, from the `all` or `user` views. */
export function indexStatsSql(which: "all" | "user", major: number): string {
  return `SELECT i.schemaname, i.indexrelname, i.relname, i.relid, i.indexrelid, i.idx_scan, ${major >= 16 ? "i.last_idx_scan" : "NULL::timestamptz AS last_idx_scan"},
                 i.idx_tup_read, i.idx_tup_fetch, io.idx_blks_read, io.idx_blks_hit
            FROM pg_stat_${which}_indexes i LEFT JOIN pg_statio_${which}_indexes io USING (indexrelid)`;
}
