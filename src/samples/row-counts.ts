/** Approximate row counts of the metrics tables: planner estimates, made exact where they are small. */
import type { Queryable } from "../../drivers/types.ts";
import { probeTable } from "../probes/ddl.ts";

const EXACT_BELOW = 10_000;

export async function probeRowCounts(db: Queryable, probes: readonly string[]): Promise<Map<string, number>> {
  const estimates = await db.query<{ probe: string; estimate: number }>(
    `SELECT parent.relname AS probe, sum(greatest(part.reltuples, coalesce(s.n_live_tup, 0), 0))::bigint AS estimate
       FROM pg_inherits i
       JOIN pg_class parent ON parent.oid = i.inhparent
       JOIN pg_namespace n ON n.oid = parent.relnamespace AND n.nspname = 'metrics'
       JOIN pg_class part ON part.oid = i.inhrelid
       LEFT JOIN pg_stat_user_tables s ON s.relid = part.oid
      GROUP BY parent.relname`,
  );
  const counts = new Map(probes.map((p) => [p, 0]));
  for (const { probe, estimate } of estimates) {
    if (!counts.has(probe)) continue;
    if (estimate >= EXACT_BELOW) counts.set(probe, estimate);
    else counts.set(probe, (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${probeTable(probe)}`))[0].n);
  }
  return counts;
}
