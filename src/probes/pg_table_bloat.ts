import { dim, gauge, ratio } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

/**
 * Table bloat estimated from the statistics catalog, with no extension: a table's live rows need about
 * reltuples x (tuple header + average row width from pg_stats, each aligned to 8 bytes, + a 4-byte line
 * pointer) bytes, in pages of block_size minus the page header, filled to the table's fillfactor; what the
 * table holds beyond that is bloat. Only tables whose every column has statistics are estimated.
 */
const BLOAT_SQL = `
WITH tables AS (
  SELECT c.oid, n.nspname AS schemaname, c.relname, c.reltuples, c.relpages, current_setting('block_size')::int AS block_size,
         coalesce((SELECT substring(o FROM 'fillfactor=([0-9]+)')::int FROM unnest(c.reloptions) o WHERE o LIKE 'fillfactor=%'), 100) AS fillfactor
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'm') AND c.relpages > 0 AND c.reltuples >= 0
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
), rows AS (
  SELECT t.oid, count(*) AS columns, count(s.attname) AS with_stats,
         coalesce(sum((1 - s.null_frac) * s.avg_width), 0) AS data_width, coalesce(bool_or(s.null_frac > 0), false) AS has_nulls
    FROM tables t
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_stats s ON s.schemaname = t.schemaname AND s.tablename = t.relname AND s.attname = a.attname AND NOT s.inherited
   GROUP BY t.oid
), needed AS (
  SELECT t.*,
         ceil(t.reltuples * (ceil((23 + CASE WHEN r.has_nulls THEN ceil(r.columns / 8.0) ELSE 0 END) / 8.0) * 8 + ceil(r.data_width / 8.0) * 8 + 4)
              / ((t.block_size - 24) * t.fillfactor / 100.0)) AS live_pages
    FROM tables t JOIN rows r ON r.oid = t.oid
   WHERE r.with_stats = r.columns
)
SELECT schemaname, relname, relpages::bigint * block_size AS table_bytes, reltuples::bigint AS estimated_rows,
       greatest(relpages - live_pages, 0)::bigint * block_size AS bloat_bytes,
       round((100 * greatest(relpages - live_pages, 0) / relpages)::numeric, 1)::double precision AS bloat_ratio
  FROM needed`;

export const pgTableBloat: ProbeDefinition = {
  name: "pg_table_bloat",
  description:
    "Estimated table bloat from pg_class and pg_stats, no extension needed: the space a table holds beyond what its live rows need at its " +
    "fillfactor. An estimate: with statistics as of the last ANALYZE it is within about 15 percentage points of the measured bloat for " +
    "ordinary tables (row widths from pg_stats ignore alignment padding between columns, so wide rows of many small columns read a little " +
    "high); tables never analyzed, and tables whose columns the monitoring role may not read (pg_stats hides them), are left out",
  scope: "database",
  defaultIntervalSeconds: 3600,
  defaultRetentionDays: 30,
  keys: ["database_name", "schemaname", "relname"],
  columns: [
    dim("database_name", "Database the sample was taken in"),
    dim("schemaname", "Schema of the table"),
    dim("relname", "Name of the table (or materialized view)"),
    gauge("table_bytes", "Size of the table's main fork (relpages x block_size, as of the last VACUUM or ANALYZE)"),
    gauge("estimated_rows", "Live rows as of the last VACUUM or ANALYZE (reltuples)"),
    gauge("bloat_bytes", "Estimated bytes beyond what the live rows need"),
    ratio("bloat_ratio", "Estimated bloat as a percentage of the table's size"),
  ],
  collect: { runs: "each_database", sql: () => [BLOAT_SQL] },
};
