/** Approximate sample counts per probe: planner estimates of the raw rows, made exact where they are small, plus the compressed days' samples. */
import type { Queryable } from "../../drivers/types.ts";
import { compressedTableName, rawTableName } from "../probes/ddl.ts";
import { compressedTable, rawTable } from "../probes/history-ddl.ts";

const EXACT_BELOW = 10_000;

export async function probeRowCounts(db: Queryable, probes: readonly string[]): Promise<Map<string, number>> {
  const estimates = await db.query<{ parent: string; estimate: number }>(
    `SELECT parent.relname AS parent, sum(greatest(part.reltuples, coalesce(s.n_live_tup, 0), 0))::bigint AS estimate
       FROM pg_inherits i
       JOIN pg_class parent ON parent.oid = i.inhparent
       JOIN pg_namespace n ON n.oid = parent.relnamespace AND n.nspname = 'metrics'
       JOIN pg_class part ON part.oid = i.inhrelid
       LEFT JOIN pg_stat_user_tables s ON s.relid = part.oid
      GROUP BY parent.relname`,
  );
  const estimateOf = new Map(estimates.map((e) => [e.parent, Number(e.estimate)]));
  const counts = new Map(probes.map((p) => [p, 0]));
  for (const probe of probes) {
    // A table with no partition yet has no rows.
    const raw = estimateOf.get(rawTableName(probe));
    const exactRaw =
      raw === undefined ? 0 : raw >= EXACT_BELOW ? raw : (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${rawTable(probe)}`))[0].n;
    // One row per connection, day and entity, each saying how many samples it holds.
    const compressed = estimateOf.has(compressedTableName(probe))
      ? Number((await db.query<{ n: string }>(`SELECT coalesce(sum(samples), 0)::bigint AS n FROM ${compressedTable(probe)}`))[0].n)
      : 0;
    counts.set(probe, exactRaw + compressed);
  }
  return counts;
}
