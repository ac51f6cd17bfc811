/**
 * Per-sample reduction in the datastore for level metrics of multi-entity probes: instead of every entity
 * row, one row per sample with the count, sum, minimum, maximum or last value the aggregation needs.
 * Used only where the result is exactly the pure pipeline's (integer sums, or min/max/last).
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { deadTupleValues, type LevelPoint, levelPoint } from "../metrics/series.ts";
import { findColumn } from "../probes/index.ts";
import { probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { epochMsSql } from "./changes-repository.ts";
import { excludedRowsSql } from "./samples-repository.ts";

const INTEGER_TYPES = new Set(["smallint", "integer", "bigint"]);

/** Whether the datastore can reduce this metric per sample with the same numbers the pipeline computes. */
export function reducibleInDatastore(probe: ProbeDefinition, metric: MetricRequest, aggregation: Aggregation): boolean {
  if (probe.keys.length === 0) return false; // one row per sample already
  if (metric.form === "dead_tuple_ratio") return true;
  if (metric.form !== "raw") return false;
  return aggregation === "min" || aggregation === "max" || aggregation === "last" || INTEGER_TYPES.has(findColumn(probe, metric.metric)?.type ?? "");
}

function selectList(probe: ProbeDefinition, metrics: readonly MetricRequest[], aggregation: Aggregation): string[] {
  const entityOrder = probe.keys.map((k) => `${quoteIdent(k)} DESC`).join(", ");
  return metrics.flatMap((m, i) => {
    if (m.form === "dead_tuple_ratio") {
      const both = "FILTER (WHERE n_dead_tup IS NOT NULL AND n_live_tup IS NOT NULL)";
      return [`coalesce(sum(n_dead_tup) ${both}, 0) AS dead_${i}`, `coalesce(sum(n_dead_tup + n_live_tup) ${both}, 0) AS total_${i}`];
    }
    const c = quoteIdent(m.metric);
    const parts = [`count(${c})::int AS n_${i}`];
    if (aggregation === "avg" || aggregation === "sum") parts.push(`sum(${c}) AS sum_${i}`);
    if (aggregation === "min") parts.push(`min(${c}) AS min_${i}`);
    if (aggregation === "max") parts.push(`max(${c}) AS max_${i}`);
    if (aggregation === "last") parts.push(`(array_agg(${c} ORDER BY ${entityOrder}) FILTER (WHERE ${c} IS NOT NULL))[1] AS last_${i}`);
    return parts;
  });
}

export interface LevelQuery {
  probe: ProbeDefinition;
  metrics: readonly MetricRequest[];
  aggregation: Aggregation;
  connectionIds: readonly number[];
  from: number;
  to: number;
  filters: Readonly<Record<string, string>>;
}

/** Level points per connection (every sample, with or without values), per metric, in time order. */
export async function fetchLevelPoints(db: Queryable, q: LevelQuery): Promise<Map<number, LevelPoint[][]>> {
  const params: unknown[] = [q.connectionIds, new Date(q.from).toISOString(), new Date(q.to).toISOString()];
  const where = ["connection_id = ANY($1::int[])", "collected_at >= $2::timestamptz", "collected_at <= $3::timestamptz", ...excludedRowsSql(q.probe)];
  for (const [column, value] of Object.entries(q.filters)) {
    params.push(value);
    where.push(`${quoteIdent(column)} = $${params.length}`);
  }
  // Sample times as epoch milliseconds: decoding a Date per sample was a large share of a week's read.
  const rows = await db.query<Record<string, number | null> & { connection_id: number; collected_at: number }>(
    `SELECT connection_id, ${epochMsSql("collected_at")}, ${selectList(q.probe, q.metrics, q.aggregation).join(", ")}
       FROM ${probeTable(q.probe.name)} s WHERE ${where.join(" AND ")}
      GROUP BY connection_id, s.collected_at ORDER BY connection_id, s.collected_at`,
    params,
  );
  const result = new Map<number, LevelPoint[][]>(q.connectionIds.map((id) => [id, q.metrics.map(() => [])]));
  for (const row of rows) {
    const t = row.collected_at;
    q.metrics.forEach((m, i) => {
      let point: LevelPoint;
      if (m.form === "dead_tuple_ratio") point = levelPoint(t, deadTupleValues(row[`dead_${i}`] ?? 0, row[`total_${i}`] ?? 0));
      else {
        const n = row[`n_${i}`] ?? 0;
        const value = (name: string) => row[`${name}_${i}`] ?? Number.NaN;
        point = { t, count: n, sum: value("sum"), min: value("min"), max: value("max"), last: value("last") };
      }
      result.get(row.connection_id)![i].push(point);
    });
  }
  return result;
}
