/**
 * Time rollups of level columns (metrics.<probe>__levels): the SQL that reduces raw rows per sample and merges
 * samples or cells into one cell's facts (shared by the sample writer, which keeps the cells, and the query,
 * which reads whole cells and the raw rest of each bucket), and the read of a level query's buckets.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { RollupPlan } from "../metrics/rollup-plan.ts";
import type { LevelPoint } from "../metrics/series.ts";
import { LEVEL_FACTS, factColumn as fact, levelsTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { excludedRowsSql } from "./samples-repository.ts";

/** Per-sample facts of each column from raw rows (grouped by connection_id and collected_at). */
export function samplePartials(probe: ProbeDefinition, columns: readonly string[]): string[] {
  const entityOrder = probe.keys.length ? ` ORDER BY ${probe.keys.map((k) => `${quoteIdent(k)} DESC`).join(", ")}` : "";
  return columns.flatMap((name) => {
    const c = quoteIdent(name);
    return [
      `count(${c})::int AS ${fact(name, "n")}`,
      `sum(${c})::float8 AS ${fact(name, "sum")}`,
      `min(${c})::float8 AS ${fact(name, "min")}`,
      `max(${c})::float8 AS ${fact(name, "max")}`,
      `((array_agg(${c}${entityOrder}) FILTER (WHERE ${c} IS NOT NULL))[1])::float8 AS ${fact(name, "last")}`,
      `CASE WHEN count(${c}) > 0 THEN collected_at END AS ${fact(name, "last_at")}`,
    ];
  });
}

/** The facts of rows (samples or cells) merged into one: counts and sums added, the latest last kept. */
export function mergedFacts(columns: readonly string[]): string[] {
  return columns.flatMap((name) => [
    `coalesce(sum(${fact(name, "n")}), 0)::int AS ${fact(name, "n")}`,
    `sum(${fact(name, "sum")}) AS ${fact(name, "sum")}`,
    `min(${fact(name, "min")}) AS ${fact(name, "min")}`,
    `max(${fact(name, "max")}) AS ${fact(name, "max")}`,
    `(array_agg(${fact(name, "last")} ORDER BY ${fact(name, "last_at")} DESC) FILTER (WHERE ${fact(name, "n")} > 0))[1] AS ${fact(name, "last")}`,
    `max(${fact(name, "last_at")}) AS ${fact(name, "last_at")}`,
  ]);
}

export const factColumns = (columns: readonly string[]) => columns.flatMap((name) => LEVEL_FACTS.map((f) => fact(name, f)));

export interface BucketLevelQuery {
  probe: ProbeDefinition;
  /** Level columns to read. */
  columns: readonly string[];
  connectionIds: readonly number[];
  plan: RollupPlan;
}

/**
 * Per connection, per column: one point per bucket that has values (the merged facts of its cells and raw
 * samples, at the time of its latest value), in bucket order. One statement.
 */
export async function fetchBucketLevels(db: Queryable, q: BucketLevelQuery): Promise<Map<number, LevelPoint[][]>> {
  const iso = (t: number) => new Date(t).toISOString();
  const facts = factColumns(q.columns);
  const rows = await db.query<Record<string, number | Date | null> & { connection_id: number; k: number }>(
    `SELECT connection_id, k, ${mergedFacts(q.columns).join(", ")}
       FROM (
         SELECT l.connection_id, p.k, ${facts.map((f) => `l.${f}`).join(", ")}
           FROM ${probeTable(levelsTableName(q.probe.name))} l
           JOIN unnest($2::int[], $3::timestamptz[], $4::int[]) AS p(level_seconds, cell_start, k)
             ON l.level_seconds = p.level_seconds AND l.cell_start = p.cell_start
          WHERE l.connection_id = ANY($1::int[]) AND l.cell_start >= $8::timestamptz AND l.cell_start < $9::timestamptz
         UNION ALL
         -- One index range scan per raw range (a join would compare every range with every row).
         SELECT s.connection_id, p.k, ${facts.map((f) => `s.${f}`).join(", ")}
           FROM unnest($5::timestamptz[], $6::timestamptz[], $7::int[]) AS p(lo, hi, k)
           CROSS JOIN LATERAL (
             SELECT connection_id, ${samplePartials(q.probe, q.columns).join(", ")}
               FROM ${probeTable(q.probe.name)}
              WHERE ${["connection_id = ANY($1::int[])", "collected_at >= p.lo", "collected_at < p.hi", ...excludedRowsSql(q.probe)].join(" AND ")}
              GROUP BY connection_id, collected_at) s
       ) parts
      GROUP BY connection_id, k ORDER BY connection_id, k`,
    [
      q.connectionIds,
      q.plan.cells.map((c) => c.levelSeconds),
      q.plan.cells.map((c) => iso(c.start)),
      q.plan.cells.map((c) => c.k),
      q.plan.raw.map((r) => iso(r.from)),
      q.plan.raw.map((r) => iso(r.to)),
      q.plan.raw.map((r) => r.k),
      // The cells' span, so that only the window's cells are looked up.
      iso(q.plan.cells.reduce((t, c) => Math.min(t, c.start), Number.MAX_SAFE_INTEGER)),
      iso(q.plan.cells.reduce((t, c) => Math.max(t, c.start + c.levelSeconds * 1000), 0)),
    ],
  );
  const result = new Map<number, LevelPoint[][]>(q.connectionIds.map((id) => [id, q.columns.map(() => [])]));
  for (const row of rows) {
    q.columns.forEach((name, i) => {
      const n = row[`${name}:n`] as number;
      if (n === 0) return;
      const value = (f: string) => Number(row[`${name}:${f}`]);
      result.get(row.connection_id)![i].push({ t: (row[`${name}:last_at`] as Date).getTime(), count: n, sum: value("sum"), min: value("min"), max: value("max"), last: value("last") });
    });
  }
  return result;
}
