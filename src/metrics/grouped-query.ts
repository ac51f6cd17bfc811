/**
 * The metrics query with `group_by`: one series per metric per connection per entity group (each database,
 * each table, ...), each carrying its key fields, in key order; `top` keeps the groups with the largest total
 * of the first metric over the window. Computed by the pure pipeline from the raw rows. Each group sees every
 * sample of its connection holding only its own rows, so a group missing from a sample contributes no change
 * there, as an entity that appears or vanishes does in the ungrouped query.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchSampleRows } from "../datastore/samples-repository.ts";
import { InputError } from "../errors.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { pointTimes } from "./buckets.ts";
import { type MetricSeries, type MetricsQuery, neededColumns, prepareMetricsQuery } from "./query.ts";
import { type Row, type Sample, groupSamples } from "./samples.ts";
import { computeSeries } from "./series.ts";

export interface GroupedSeries extends MetricSeries {
  entity: Record<string, string | null>;
}

export const MAX_TOP = 100;

/** The request's names as the probe's key columns; the filter spellings schema_name and table_name are accepted too. */
export function resolveGroupBy(probe: ProbeDefinition, groupBy: string): string[] {
  const names = groupBy.split(",").map((s) => s.trim()).filter(Boolean);
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

export async function runGroupedMetricsQuery(db: Queryable, q: MetricsQuery & { groupBy: string; top?: number }): Promise<GroupedSeries[]> {
  const { probe, metrics, aggregation, filters, intervalSeconds, buckets, borrowFrom } = await prepareMetricsQuery(db, q);
  const columns = resolveGroupBy(probe, q.groupBy);
  const rows = await fetchSampleRows(db, { probe, connectionIds: q.connectionIds, from: borrowFrom, to: q.window.end, columns: [...neededColumns(probe, metrics), ...columns], filters });
  const keyOf = (r: Row) => JSON.stringify(columns.map((c) => (r[c] === null || r[c] === undefined ? null : String(r[c]))));
  const times = pointTimes(buckets);

  // Per connection: group key -> one value array per metric.
  const perConnection = q.connectionIds.map((id) => {
    const own = rows.filter((r) => r.connection_id === id);
    const sampleTimes = groupSamples(probe, own).map((s) => s.t);
    const byGroup = new Map<string, Row[]>();
    for (const r of own) {
      const key = keyOf(r);
      const list = byGroup.get(key);
      if (list) list.push(r);
      else byGroup.set(key, [r]);
    }
    let groups = [...byGroup.keys()].sort();
    const values = new Map(
      groups.map((g) => {
        const mine = new Map(groupSamples(probe, byGroup.get(g)!).map((s) => [s.t, s.rows]));
        const samples: Sample[] = sampleTimes.map((t) => ({ t, rows: mine.get(t) ?? [] }));
        return [g, computeSeries({ probe, metrics, samples, buckets, intervalSeconds, aggregation })];
      }),
    );
    if (q.top !== undefined) {
      const total = (g: string) => values.get(g)![0].reduce<number>((s, v) => s + (v ?? 0), 0);
      const kept = new Set([...groups].sort((a, b) => total(b) - total(a) || a.localeCompare(b)).slice(0, q.top));
      groups = groups.filter((g) => kept.has(g));
    }
    return { id, groups, values };
  });

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
