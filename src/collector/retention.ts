/** Drops whole weekly partitions that are past every configured retention of their probe. */
import type { Queryable } from "../../drivers/types.ts";
import { compressedTableName, quoteIdent, writtenTables } from "../probes/ddl.ts";
import { PROBES } from "../probes/index.ts";

/** Partitions whose upper bound lies before now minus the probe's longest retention; returns their names. */
export async function dropExpiredPartitions(db: Queryable, now = new Date()): Promise<string[]> {
  const retention = await db.query<{ probe_name: string; days: number }>(
    "SELECT probe_name, max(retention_days) AS days FROM probe_configs GROUP BY probe_name",
  );
  const dropped: string[] = [];
  for (const probe of PROBES) {
    const days = retention.find((r) => r.probe_name === probe.name)?.days ?? probe.defaultRetentionDays;
    const cutoff = now.getTime() - days * 86_400_000;
    for (const table of [...writtenTables(probe.name), compressedTableName(probe.name)]) {
      const partitions = await db.query<{ name: string; bound: string }>(
        `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = to_regclass($1)`,
        [`metrics.${quoteIdent(table)}`],
      );
      for (const p of partitions) {
        const bound = /TO \('([^']+)'\)/.exec(p.bound)?.[1];
        // pg_get_expr writes e.g. '2026-04-13 00:00:00+00'
        const upper = bound ? Date.parse(bound.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00")) : Number.NaN;
        if (Number.isNaN(upper) || upper >= cutoff) continue;
        await db.query(`DROP TABLE metrics.${quoteIdent(p.name)}`);
        dropped.push(p.name);
      }
    }
  }
  return dropped;
}
