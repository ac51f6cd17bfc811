/**
 * Per-sample reduction in the datastore for level metrics of multi-entity probes: instead of every entity
 * row, one row per sample with the count, sum, minimum, maximum or last value the aggregation needs.
 * Used only where the result is exactly the pure pipeline's (integer sums, or min/max/last). The count and sum of
 * a recorded gauge (probes/ddl.ts recordedGaugeColumns) are read from the sample writer's rows of changes, one a
 * sample already reduced, where they cover every sample.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { needsOnlySums } from "../metrics/rollup-plan.ts";
import { deadTupleValues, type LevelPoint, levelPoint } from "../metrics/series.ts";
import { findColumn } from "../probes/index.ts";
import { INTEGER_TYPES, changesTableName, factColumn, probeTable, quoteIdent, recordedGaugeColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { epochMsSql, msSql } from "./read-changes.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { samplesSql } from "../probes/history-ddl.ts";

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
    if (needsOnlySums(aggregation)) parts.push(`sum(${c}) AS sum_${i}`);
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

/**
 * Level points per connection (every sample, with or without values), per metric, in time order: recorded gauges'
 * averages and sums over every entity from the recorded changes where they can answer, the rest reduced from raw rows.
 */
export async function fetchLevelPoints(db: Queryable, q: LevelQuery): Promise<Map<number, LevelPoint[][]>> {
  const recordedGauges = new Set(recordedGaugeColumns(q.probe).map((c) => c.name));
  const recorded =
    Object.keys(q.filters).length === 0 && needsOnlySums(q.aggregation) ? q.metrics.filter((m) => m.form === "raw" && recordedGauges.has(m.metric)) : [];
  const fromChanges = recorded.length ? await fetchRecordedLevelPoints(db, { ...q, metrics: recorded }) : undefined;
  const rest = fromChanges ? q.metrics.filter((m) => !recorded.includes(m)) : q.metrics;
  const reduced = rest.length ? await fetchReducedLevelPoints(db, { ...q, metrics: rest }) : undefined;
  return new Map(
    q.connectionIds.map((id) => [
      id,
      q.metrics.map((m) => (fromChanges && recorded.includes(m) ? fromChanges.get(id)![recorded.indexOf(m)] : reduced!.get(id)![rest.indexOf(m)])),
    ]),
  );
}

/**
 * Recorded gauges' level points (counts and sums) from the rows of changes of [from, to], and the connection's
 * first sample there reduced from its raw rows: a sample has a row of changes but for a connection's first (no
 * interval ends there), which is the first row's previous sample where that lies in range. Undefined where a
 * connection has no row, a row's previous sample is not the row before it, or a row has no facts (written before
 * migration 33): then every sample is not provably read.
 */
async function fetchRecordedLevelPoints(db: Queryable, q: LevelQuery): Promise<Map<number, LevelPoint[][]> | undefined> {
  const facts = q.metrics.flatMap((m, i) => [`${factColumn(m.metric, "n")} AS n_${i}`, `${factColumn(m.metric, "sum")} AS sum_${i}`]);
  const reduced = q.metrics.flatMap((m) => [`count(r.${quoteIdent(m.metric)})::int`, `coalesce(sum(r.${quoteIdent(m.metric)}), 0)::float8`]);
  const changes = probeTable(changesTableName(q.probe.name));
  const firstSample = samplesSql(
    q.probe,
    "f.prev_collected_at",
    "f.prev_collected_at",
    q.metrics.map((m) => m.metric),
  );
  const rows = await db.query<Record<string, number | null> & { connection_id: number; collected_at: number; prev_collected_at: number | null }>(
    `SELECT connection_id, ${epochMsSql("collected_at")}, ${epochMsSql("prev_collected_at")}, ${facts.join(", ")}
       FROM ${changes} WHERE connection_id = ANY($1::int[]) AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
     UNION ALL
     SELECT r.connection_id, ${msSql("r.collected_at")}, NULL, ${reduced.join(", ")}
       FROM unnest($1::int[]) AS id
       CROSS JOIN LATERAL (SELECT c.prev_collected_at FROM ${changes} c
                            WHERE c.connection_id = id AND c.collected_at >= $2::timestamptz AND c.collected_at <= $3::timestamptz ORDER BY c.collected_at LIMIT 1) f
       JOIN LATERAL ${firstSample} r ON r.connection_id = id AND r.collected_at = f.prev_collected_at
      WHERE f.prev_collected_at >= $2::timestamptz${excludedRowsSql(q.probe)
        .map((w) => ` AND r.${w}`)
        .join("")}
      GROUP BY r.connection_id, r.collected_at`,
    [q.connectionIds, new Date(q.from).toISOString(), new Date(q.to).toISOString()],
    { reusePlan: true }, // planned once per connection (lab: an hour 3 -> 1.5 ms)
  );
  // In time order per connection here rather than sorted in the datastore (the first sample's row comes from another table).
  rows.sort((a, b) => a.connection_id - b.connection_id || a.collected_at - b.collected_at);
  const result = new Map<number, LevelPoint[][]>(q.connectionIds.map((id) => [id, q.metrics.map(() => [])]));
  for (const [j, row] of rows.entries()) {
    const before = rows[j - 1]?.connection_id === row.connection_id ? rows[j - 1] : undefined;
    if (before && row.prev_collected_at !== before.collected_at) return undefined;
    for (let i = 0; i < q.metrics.length; i++) {
      const [count, sum] = [row[`n_${i}`], row[`sum_${i}`]];
      if (count === null || sum === null) return undefined;
      result.get(row.connection_id)![i].push({ t: row.collected_at, count, sum, min: Number.NaN, max: Number.NaN, last: Number.NaN });
    }
  }
  return [...result.values()].every((points) => points[0].length > 0) ? result : undefined;
}

/** Level points of every sample reduced from raw rows, in the datastore. */
async function fetchReducedLevelPoints(db: Queryable, q: LevelQuery): Promise<Map<number, LevelPoint[][]>> {
  const params: unknown[] = [q.connectionIds, new Date(q.from).toISOString(), new Date(q.to).toISOString()];
  const where = ["connection_id = ANY($1::int[])", "collected_at >= $2::timestamptz", "collected_at <= $3::timestamptz", ...excludedRowsSql(q.probe)];
  for (const [column, value] of Object.entries(q.filters)) {
    params.push(value);
    where.push(`${quoteIdent(column)} = $${params.length}`);
  }
  // Sample times as epoch milliseconds: decoding a Date per sample was a large share of a week's read.
  const rows = await db.query<Record<string, number | null> & { connection_id: number; collected_at: number }>(
    `SELECT connection_id, ${epochMsSql("collected_at")}, ${selectList(q.probe, q.metrics, q.aggregation).join(", ")}
       FROM ${samplesSql(q.probe, "$2", "$3", [...q.metrics.flatMap((m) => (m.form === "dead_tuple_ratio" ? ["n_dead_tup", "n_live_tup"] : [m.metric])), ...Object.keys(q.filters)])} s WHERE ${where.join(" AND ")}
      GROUP BY connection_id, s.collected_at ORDER BY connection_id, s.collected_at`,
    params,
    { reusePlan: true },
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
