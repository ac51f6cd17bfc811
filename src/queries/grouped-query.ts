/**
 * The metrics query with `group_by`: one series per metric per connection per entity group (each database,
 * each table, ...), each carrying its key fields, in key order; `top` keeps the groups with the largest total
 * of the first metric over the window. Each group sees every sample of its connection holding only its own rows,
 * so a group missing from a sample contributes no change there, as an entity that appears or vanishes does in the
 * ungrouped query. Counter metrics averaged per bucket are read by difference (samples/read-by-difference.ts);
 * the rest is computed by the pure pipeline from raw rows, the reference both are tested against.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchSampleRows } from "../samples/read-raw-rows.ts";
import { InputError } from "../errors.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { pointTimes } from "../metrics/buckets.ts";
import { differencedAt, differencedGroupSeries, wideEnoughToDifference } from "../samples/series-by-difference.ts";
import { type MetricSeries, type MetricsQuery, neededColumns, prepareMetricsQuery } from "./query.ts";
import { type EntitySeries, entitySeriesFromCells } from "../samples/series-from-entity-cells.ts";
import { type Row, type Sample, groupSamples } from "../metrics/samples.ts";
import { computeSeries } from "../metrics/series.ts";

export interface GroupedSeries extends MetricSeries {
  entity: Record<string, string | null>;
}

export const MAX_TOP = 100;

/** The request's names as the probe's key columns; the filter spellings schema_name and table_name are accepted too. */
export function resolveGroupBy(probe: ProbeDefinition, groupBy: string): string[] {
  const names = groupBy
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new InputError("`group_by` names no column; give key columns of the probe, e.g. database_name");
  const alias: Record<string, string[]> = { database_name: ["database_name", "datname"], schema_name: ["schemaname"], table_name: ["relname"] };
  return [
    ...new Set(
      names.map((n) => {
        const column = (alias[n] ?? [n]).find((c) => probe.keys.includes(c));
        if (!column) {
          const keys = probe.keys.length ? probe.keys.join(", ") : "none (it has one entity per sample)";
          throw new InputError(`\`group_by\`: \`${n}\` is not a key column of probe \`${probe.name}\`; its keys are ${keys}`);
        }
        return column;
      }),
    ),
  ];
}

/** `how`: "pipeline" always computes from raw rows (the reference, for tests). */
export async function runGroupedMetricsQuery(
  db: Queryable,
  q: MetricsQuery & { groupBy: string; top?: number },
  how: "auto" | "pipeline" = "auto",
): Promise<GroupedSeries[]> {
  const { probe, metrics, aggregation, filters, intervalSeconds, buckets, borrowFrom, levelsFrom } = await prepareMetricsQuery(db, q);
  const columns = resolveGroupBy(probe, q.groupBy);
  // Groups of one entity each: long windows can read the hourly entity cells (once, for every connection).
  const oneEntityEach = how === "auto" && columns.length === probe.keys.length;
  let fromCells: Promise<Map<number, EntitySeries[]> | undefined> | undefined;
  const entityCells = async (id: number) => {
    if (!oneEntityEach) return undefined;
    fromCells ??= entitySeriesFromCells(db, {
      probe,
      metrics,
      connectionIds: q.connectionIds,
      buckets,
      intervalSeconds,
      aggregation,
      levelsFrom,
      filters,
      borrowFrom,
    });
    const found = (await fromCells)?.get(id);
    return found && new Map(found.map((e) => [JSON.stringify(columns.map((c) => e.entity[probe.keys.indexOf(c)])), e.values]));
  };
  const times = pointTimes(buckets);
  const differencing = how === "auto" && metrics.every(differencedAt(aggregation)) && wideEnoughToDifference(buckets, intervalSeconds);
  let rows: Row[] | undefined;
  const rawRows = async () =>
    (rows ??= await fetchSampleRows(db, {
      probe,
      connectionIds: q.connectionIds,
      from: borrowFrom,
      to: q.window.end,
      columns: [...neededColumns(probe, metrics), ...columns],
      filters,
      entityOrder: columns.length < probe.keys.length, // a group of one entity has one row a sample
    }));
  const keyOfValues = (r: Row) => JSON.stringify(columns.map((c) => (r[c] === null || r[c] === undefined ? null : String(r[c]))));
  // A group's key is spelled once per group, not once per row (a day of 20 databases is 29,000 rows).
  const keys = new Map<unknown, string>();
  const keyOf = (r: Row) => {
    if (columns.length > 1) return keyOfValues(r);
    const value = r[columns[0]];
    let key = keys.get(value);
    if (key === undefined) keys.set(value, (key = keyOfValues(r)));
    return key;
  };

  /** The pipeline on raw rows: each group sees every sample of its connection, holding only its own rows. */
  const pipelineSeries = async (id: number) => {
    const own = (await rawRows()).filter((r) => r.connection_id === id);
    const sampleTimes = groupSamples(probe, own).map((s) => s.t);
    const byGroup = new Map<string, Row[]>();
    for (const r of own) {
      const key = keyOf(r);
      const list = byGroup.get(key);
      if (list) list.push(r);
      else byGroup.set(key, [r]);
    }
    return new Map(
      [...byGroup.keys()].map((g) => {
        const mine = new Map(groupSamples(probe, byGroup.get(g)!).map((s) => [s.t, s.rows]));
        const samples: Sample[] = sampleTimes.map((t) => ({ t, rows: mine.get(t) ?? [] }));
        return [g, computeSeries({ probe, metrics, samples, buckets, intervalSeconds, aggregation })];
      }),
    );
  };

  // Per connection: group key -> one value array per metric.
  const perConnection: Array<{ id: number; groups: string[]; values: Map<string, Array<Array<number | null>>> }> = [];
  for (const id of q.connectionIds) {
    // By difference first (fewest rows read, but only over equally spaced samples), then the entity cells
    // (any spacing, but every row outside whole hours is read), then the pipeline on raw rows.
    const values =
      (differencing
        ? (await differencedGroupSeries(db, { probe, metrics, columns, filters, connectionId: id, buckets, intervalSeconds, cellsFrom: levelsFrom }))?.series
        : undefined) ??
      (await entityCells(id)) ??
      (await pipelineSeries(id));
    let groups = [...values.keys()].sort();
    if (q.top !== undefined) {
      const total = (g: string) => values.get(g)![0].reduce<number>((s, v) => s + (v ?? 0), 0);
      const kept = new Set([...groups].sort((a, b) => total(b) - total(a) || a.localeCompare(b)).slice(0, q.top));
      groups = groups.filter((g) => kept.has(g));
    }
    perConnection.push({ id, groups, values });
  }

  // Metrics in request order, then connections in request order, then groups by key.
  return metrics.flatMap((m, i) =>
    perConnection.flatMap(({ id, groups, values }) =>
      groups.map((g) => ({
        name: m.name,
        metric: m.metric,
        unit: m.unit,
        connection_id: id,
        entity: Object.fromEntries(columns.map((c, j) => [c, (JSON.parse(g) as Array<string | null>)[j]])),
        data: times.map((time, k) => ({ time, value: values.get(g)![i][k] })),
      })),
    ),
  );
}
