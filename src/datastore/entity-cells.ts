/**
 * Hourly rollups of each entity's changes (metrics.<probe>__entity_cells): the SQL that turns raw rows into
 * per-entity interval facts (shared by the sample writer and the query), their merge, and the read of a
 * per-entity counter query's buckets: whole hours, and raw rows for the rest.
 *
 * An entity's interval is the connection's interval (its previous sample, from `__changes`) with the entity in
 * both samples; its change is valid when the reset marker is the same and the value did not go down, as in the
 * pipeline (metrics/series.ts) when each entity is charted alone.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { RollupPlan } from "../metrics/rollup-plan.ts";
import { ENTITY_FACTS, changesTableName, entityCellsTableName, factColumn as fact, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { readRollupBuckets } from "./rollup-read.ts";
import { excludedRowsSql } from "./samples-repository.ts";

/** The entity's key values as text, in the probe's key order. */
export const entityKeySql = (probe: ProbeDefinition, alias: string) => `ARRAY[${probe.keys.map((k) => `${alias}.${quoteIdent(k)}::text`).join(", ")}]`;

/**
 * A SELECT of connection_id, collected_at, entity and the interval facts of every visible row `r` of the
 * connections `$1` (int[]) that satisfies `where` (conditions on `r`). A row at a connection's first sample, or
 * whose entity was not in the previous sample, has a fact row with no interval.
 */
export function entityIntervalFacts(probe: ProbeDefinition, columns: readonly string[], where: readonly string[]): string {
  const raw = probeTable(probe.name);
  const span = "(extract(epoch FROM r.collected_at - c.prev_collected_at) * 1000)::float8";
  const paired = "prev.connection_id IS NOT NULL";
  const facts = columns.flatMap((name) => {
    const col = quoteIdent(name);
    const marker = probe.columns.find((x) => x.name === name)?.resetBy;
    const sameMarker = marker ? ` AND r.${quoteIdent(marker)} IS NOT DISTINCT FROM prev.${quoteIdent(marker)}` : "";
    const change = `CASE WHEN ${paired}${sameMarker} AND r.${col} >= prev.${col} THEN (r.${col} - prev.${col})::float8 END`;
    return [`(${change} IS NOT NULL)::int AS ${fact(name, "n")}`, `${change} AS ${fact(name, "sum")}`, `${change} / ${span} AS ${fact(name, "ratio_sum")}`];
  });
  const sameEntity = probe.keys.map((k) => `prev.${quoteIdent(k)} IS NOT DISTINCT FROM r.${quoteIdent(k)}`);
  const visible = (alias: string) => excludedRowsSql(probe).map((w) => w.replace(/^/, `${alias}.`));
  return `SELECT r.connection_id, r.collected_at, ${entityKeySql(probe, "r")} AS entity,
                 (${paired})::int AS intervals, CASE WHEN ${paired} THEN ${span} END AS max_span_ms, ${facts.join(", ")}
            FROM ${raw} r
            LEFT JOIN ${probeTable(changesTableName(probe.name))} c ON c.connection_id = r.connection_id AND c.collected_at = r.collected_at
            LEFT JOIN ${raw} prev ON prev.connection_id = r.connection_id AND prev.collected_at = c.prev_collected_at AND ${[...sameEntity, ...visible("prev")].join(" AND ")}
           WHERE ${["r.connection_id = ANY($1::int[])", ...where, ...visible("r")].join(" AND ")}`;
}

export const entityFactColumns = (columns: readonly string[]) => ["intervals", "max_span_ms", ...columns.flatMap((name) => ENTITY_FACTS.map((f) => fact(name, f)))];

/** Interval facts or cells merged into one: counts and sums added, the longest interval kept. */
export function mergedEntityFacts(columns: readonly string[]): string[] {
  return [
    "sum(intervals)::int AS intervals",
    "max(max_span_ms) AS max_span_ms",
    ...columns.flatMap((name) => [`sum(${fact(name, "n")})::int AS ${fact(name, "n")}`, ...(["sum", "ratio_sum"] as const).map((f) => `sum(${fact(name, f)}) AS ${fact(name, f)}`)]),
  ];
}

/** One entity's merged facts in one bucket. */
export interface EntityBucket {
  connectionId: number;
  entity: Array<string | null>;
  k: number;
  intervals: number;
  columns: Array<{ n: number; sum: number | null; ratioSum: number | null }>;
}

/**
 * Per connection, entity and bucket (k), the merged facts; a raw range with k = -1 only lists the entities
 * in it. `filters`: key column -> value (text), narrowing the entities read. One statement.
 */
export async function fetchEntityBuckets(
  db: Queryable,
  q: { probe: ProbeDefinition; columns: readonly string[]; connectionIds: readonly number[]; plan: RollupPlan; filters: Readonly<Record<string, string>> },
): Promise<EntityBucket[]> {
  const filters = Object.entries(q.filters);
  // The shared read takes $1..$9; the filter values follow.
  const cellWhere = filters.map(([key], i) => `l.entity[${q.probe.keys.indexOf(key) + 1}] = $${10 + i}`);
  const rawWhere = filters.map(([key], i) => `r.${quoteIdent(key)}::text = $${10 + i}`);
  const rows = await readRollupBuckets(db, {
    cellsTable: probeTable(entityCellsTableName(q.probe.name)),
    key: "entity",
    cellsWhere: cellWhere,
    params: filters.map(([, value]) => value),
    facts: entityFactColumns(q.columns),
    merged: mergedEntityFacts(q.columns),
    rawFacts: entityIntervalFacts(q.probe, q.columns, ["r.collected_at >= p.lo", "r.collected_at < p.hi", ...rawWhere]),
    connectionIds: q.connectionIds,
    plan: q.plan,
  });
  return rows.map((row) => ({
    connectionId: row.connection_id,
    entity: row.entity as unknown as Array<string | null>,
    k: row.k,
    intervals: row.intervals as number,
    columns: q.columns.map((name) => ({ n: (row[`${name}:n`] as number | null) ?? 0, sum: row[`${name}:sum`] as number | null, ratioSum: row[`${name}:ratio_sum`] as number | null })),
  }));
}
