/**
 * readFacts with `group_by`: per connection, per entity group (each database, each table, ...), per metric.
 * Each group sees every sample of its connection holding only its own rows, so a group missing from a sample
 * contributes no change there, as an entity that appears or vanishes does in the ungrouped query. Per connection,
 * the first way that answers: by difference (fewest rows read, but only over equally spaced samples), the hourly
 * entity cells (groups of one entity each; any spacing, but every row outside whole hours is read), raw rows.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type MetricsPlan, neededColumns } from "../metrics/metrics-plan.ts";
import { type Row, samplesPerGroup } from "../metrics/samples.ts";
import type { MetricFacts } from "../metrics/series-from-facts.ts";
import { fetchSampleRows } from "./read-raw-rows.ts";
import { differencedAt, differencedGroupSeries, wideEnoughToDifference } from "./series-by-difference.ts";
import { type EntitySeries, entitySeriesFromCells } from "./series-from-entity-cells.ts";

type Groups = Map<string, MetricFacts[]>;

export async function readGroupedFacts(db: Queryable, plan: MetricsPlan, columns: readonly string[]): Promise<Map<number, Groups>> {
  const { probe, metrics, aggregation, filters, connectionIds, buckets, intervalSeconds, levelsFrom } = plan;
  const valuesOf = (series: Array<Array<number | null>>): MetricFacts[] => series.map((values) => ({ kind: "values", values }));

  const oneEntityEach = !plan.reference && columns.length === probe.keys.length;
  let cells: Promise<Map<number, EntitySeries[]> | undefined> | undefined;
  const fromCells = async (id: number): Promise<Groups | undefined> => {
    if (!oneEntityEach) return undefined;
    cells ??= entitySeriesFromCells(db, {
      probe,
      metrics,
      connectionIds,
      buckets,
      intervalSeconds,
      aggregation,
      levelsFrom,
      filters,
      borrowFrom: plan.borrowFrom,
    });
    const found = (await cells)?.get(id);
    return found && new Map(found.map((e) => [JSON.stringify(columns.map((c) => e.entity[probe.keys.indexOf(c)])), valuesOf(e.values)]));
  };

  const differencing = !plan.reference && metrics.every(differencedAt(aggregation)) && wideEnoughToDifference(buckets, intervalSeconds);
  const byDifference = async (id: number): Promise<Groups | undefined> => {
    if (!differencing) return undefined;
    const found = await differencedGroupSeries(db, {
      probe,
      metrics,
      columns: [...columns],
      filters,
      connectionId: id,
      buckets,
      intervalSeconds,
      cellsFrom: levelsFrom,
    });
    return found && new Map([...found.series].map(([key, series]) => [key, valuesOf(series)]));
  };

  let rows: Row[] | undefined;
  const fromRows = async (id: number): Promise<Groups> => {
    rows ??= await fetchSampleRows(db, {
      probe,
      connectionIds,
      from: plan.borrowFrom,
      to: plan.window.end,
      columns: [...neededColumns(probe, metrics), ...columns],
      filters,
      entityOrder: columns.length < probe.keys.length, // a group of one entity has one row a sample
    });
    const samples = samplesPerGroup(
      probe,
      columns,
      rows.filter((r) => r.connection_id === id),
    );
    return new Map([...samples].map(([key, own]) => [key, metrics.map(() => ({ kind: "samples", samples: own }))]));
  };

  const facts = new Map<number, Groups>();
  for (const id of connectionIds) facts.set(id, (await byDifference(id)) ?? (await fromCells(id)) ?? (await fromRows(id)));
  return facts;
}
