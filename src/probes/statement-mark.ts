/**
 * pglens marks its own probe statements with a comment so that pg_stat_statements readers (top-queries with
 * exclude_collector) can leave them out. The comment goes after the first keyword, where every server version
 * keeps it in the statement text.
 */
export const COLLECTOR_MARK = "/* pglens collector */";

export function markCollectorSql(sql: string): string {
  return sql.replace(/^\s*([A-Za-z]+)/, `$1 ${COLLECTOR_MARK}`);
}
