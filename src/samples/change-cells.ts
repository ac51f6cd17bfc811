/**
 * Time rollups of the per-sample changes (metrics.<probe>__change_cells): the SQL that turns `__changes` rows
 * into interval facts and merges intervals or cells into one cell's facts (shared by the sample writer and the
 * query), and the read of a counter query's buckets: whole cells, and `__changes` rows for the rest.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { RollupPlan } from "../metrics/rollup-plan.ts";
import { CHANGE_FACTS, changeCellsTableName, changesTableName, factColumn as fact, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { spanMsSql } from "./read-changes.ts";
import { FIRST_EXTRA_PARAM, readRollupBuckets, subtractedFacts } from "./read-rollup-cells.ts";

const SPAN_MS = spanMsSql("collected_at", "prev_collected_at");

/**
 * The facts of one `__changes` row (one interval). With `gapsOver` (an SQL expression, ms), an interval longer
 * than it counts as no interval and no change, only as one of the `gaps`.
 */
export function intervalFacts(columns: readonly string[], gapsOver?: string): string[] {
  const counted = (fact: string, otherwise = "NULL") => (gapsOver ? `CASE WHEN ${SPAN_MS} <= ${gapsOver} THEN ${fact} ELSE ${otherwise} END` : fact);
  return [
    `${counted("1", "0")} AS intervals`,
    `${counted(SPAN_MS)} AS max_span_ms`,
    ...columns.flatMap((name) => {
      const c = quoteIdent(name);
      const ratio = counted(`${c} / ${SPAN_MS}`);
      return [
        `${counted(`(${c} IS NOT NULL)::int`, "0")} AS ${fact(name, "n")}`,
        `${counted(c)} AS ${fact(name, "sum")}`,
        `${ratio} AS ${fact(name, "ratio_sum")}`,
        `${ratio} AS ${fact(name, "ratio_min")}`,
        `${ratio} AS ${fact(name, "ratio_max")}`,
        `${ratio} AS ${fact(name, "ratio_last")}`,
        `${counted(`CASE WHEN ${c} IS NOT NULL THEN collected_at END`)} AS ${fact(name, "last_to")}`,
      ];
    }),
    ...(gapsOver ? [`(${SPAN_MS} > ${gapsOver})::int AS gaps`] : []),
  ];
}

/** Intervals or cells merged into one: counts and sums added, extremes kept, the latest ratio last. */
export function mergedChangeFacts(columns: readonly string[]): string[] {
  return [
    "sum(intervals)::int AS intervals",
    "max(max_span_ms) AS max_span_ms",
    ...columns.flatMap((name) => [
      `sum(${fact(name, "n")})::int AS ${fact(name, "n")}`,
      `sum(${fact(name, "sum")}) AS ${fact(name, "sum")}`,
      `sum(${fact(name, "ratio_sum")}) AS ${fact(name, "ratio_sum")}`,
      `min(${fact(name, "ratio_min")}) AS ${fact(name, "ratio_min")}`,
      `max(${fact(name, "ratio_max")}) AS ${fact(name, "ratio_max")}`,
      `(array_agg(${fact(name, "ratio_last")} ORDER BY ${fact(name, "last_to")} DESC) FILTER (WHERE ${fact(name, "n")} > 0))[1] AS ${fact(name, "ratio_last")}`,
      `max(${fact(name, "last_to")}) AS ${fact(name, "last_to")}`,
    ]),
  ];
}

/**
 * A cell's shortest interval (ms), written since migration 32 (null before) but not read with the facts: the
 * spaced read looks into a cell for changes of another length than the collection interval only where its
 * shortest or longest interval is another (changes-repository.ts spacedChangesSql). As a cell column, as the
 * fact of one `__changes` row, and merged.
 */
export const SHORTEST = { column: "min_span_ms", fact: `${SPAN_MS} AS min_span_ms`, merged: "min(min_span_ms) AS min_span_ms" } as const;

export const changeFactColumns = (columns: readonly string[]) => [
  "intervals",
  "max_span_ms",
  ...columns.flatMap((name) => CHANGE_FACTS.map((f) => fact(name, f))),
];

/**
 * changeFactColumns of a raw range as it counts when subtracted from the cell around it: counts and sums negated,
 * the longest interval kept (an upper bound), a column's extremes and latest ratio unknown.
 */
function subtractedChangeFacts(columns: readonly string[]): string[] {
  return ["-r.intervals", "r.max_span_ms", ...subtractedFacts(columns, CHANGE_FACTS, ["n", "sum", "ratio_sum"], ["last_to"])];
}

/** One bucket's merged facts: intervals ending in it, the longest, and per column its facts. */
export interface BucketChanges {
  k: number;
  intervals: number;
  maxSpanMs: number;
  /** Intervals ending in it left out as gaps (BucketChangesQuery's `gaps`). */
  gaps: number;
  columns: Array<{ n: number; sum: number | null; ratioSum: number; ratioMin: number; ratioMax: number; ratioLast: number }>;
}

export interface BucketChangesQuery {
  probe: ProbeDefinition;
  columns: readonly string[];
  connectionIds: readonly number[];
  plan: RollupPlan;
  /**
   * Intervals longer than `over` ms are left out, counted as gaps: the cells holding one longer than `readRawOver`
   * ms (at most `over`) are read from their `__changes` rows.
   */
  gaps: { over: number; readRawOver: number };
}

/** Per connection, the buckets with intervals ending in them, in bucket order. One statement. */
export async function fetchBucketChanges(db: Queryable, q: BucketChangesQuery): Promise<Map<number, BucketChanges[]>> {
  const facts = changeFactColumns(q.columns);
  const [readRawOver, gapsOver] = [`$${FIRST_EXTRA_PARAM}::float8`, `$${FIRST_EXTRA_PARAM + 1}::float8`];
  const rows = await readRollupBuckets(db, {
    cellsTable: probeTable(changeCellsTableName(q.probe.name)),
    facts: [...facts, "gaps"],
    cellFacts: [...facts.map((f) => `l.${f}`), "0"],
    merged: [...mergedChangeFacts(q.columns), "sum(gaps)::int AS gaps"],
    subtracted: [...subtractedChangeFacts(q.columns), "-r.gaps"],
    times: q.columns.map((name) => fact(name, "last_to")),
    mergePerRange: true,
    // A generic plan, once per connection: a week of a summed rate took 0.6-0.8 of the time (lab, PostgreSQL 15).
    reusePlan: true,
    rawFacts: `SELECT connection_id, collected_at, ${intervalFacts(q.columns, gapsOver).join(", ")}
                 FROM ${probeTable(changesTableName(q.probe.name))}
                WHERE connection_id = ANY($1::int[]) AND collected_at >= p.lo AND collected_at < p.hi`,
    readRawIf: `l.max_span_ms > ${readRawOver}`,
    params: [q.gaps.readRawOver, q.gaps.over],
    connectionIds: q.connectionIds,
    plan: q.plan,
  });
  const result = new Map<number, BucketChanges[]>(q.connectionIds.map((id) => [id, []]));
  for (const row of rows) {
    const value = (name: string, f: string) => row[`${name}:${f}`] as number | null;
    result.get(row.connection_id)!.push({
      k: row.k,
      intervals: row.intervals as number,
      maxSpanMs: row.max_span_ms as number,
      gaps: row.gaps as number,
      columns: q.columns.map((name) => ({
        n: value(name, "n") ?? 0,
        sum: value(name, "sum"),
        ratioSum: value(name, "ratio_sum") ?? Number.NaN,
        ratioMin: value(name, "ratio_min") ?? Number.NaN,
        ratioMax: value(name, "ratio_max") ?? Number.NaN,
        ratioLast: value(name, "ratio_last") ?? Number.NaN,
      })),
    });
  }
  return result;
}
