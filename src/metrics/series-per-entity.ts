/**
 * One probe's series computed separately for each entity group (each database, each statement) from one
 * read of the raw rows, through the same pure pipeline as the metrics query, which sums over entities.
 */
import type { Queryable } from "../../drivers/types.ts";
import { collectionIntervals } from "../datastore/probe-configs.ts";
import { fetchSampleRows } from "../datastore/samples-repository.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Buckets } from "./buckets.ts";
import { parseMetricList } from "./metric-names.ts";
import { neededColumns } from "./query.ts";
import { type Row, groupSamples } from "./samples.ts";
import { borrowLimitMs, computeSeries } from "./series.ts";

export interface PerEntityQuery {
  probe: ProbeDefinition;
  connectionId: number;
  /** Comma-separated metric names as the metrics query takes them. */
  metrics: string;
  buckets: Buckets;
  /** The group a row belongs to (e.g. its database). */
  groupOf: (row: Row) => string;
  /** Equality filters on stored columns. */
  filters?: Readonly<Record<string, string>>;
}

/** group -> one value array (n + 1 points) per requested metric, in request order. */
export async function seriesPerEntity(db: Queryable, q: PerEntityQuery): Promise<Map<string, Array<Array<number | null>>>> {
  const metrics = parseMetricList(q.metrics, q.probe);
  const intervalSeconds = (await collectionIntervals(db, q.probe.name, [q.connectionId])).get(q.connectionId)!;
  const rows = await fetchSampleRows(db, {
    probe: q.probe,
    connectionIds: [q.connectionId],
    from: q.buckets.start - borrowLimitMs(q.buckets),
    to: q.buckets.end,
    columns: neededColumns(q.probe, metrics),
    filters: q.filters ?? {},
  });
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const key = q.groupOf(row);
    const list = groups.get(key);
    if (list) list.push(row);
    else groups.set(key, [row]);
  }
  const result = new Map<string, Array<Array<number | null>>>();
  for (const [key, own] of groups) {
    result.set(key, computeSeries({ probe: q.probe, metrics, samples: groupSamples(q.probe, own), buckets: q.buckets, intervalSeconds, aggregation: "avg" }));
  }
  return result;
}
