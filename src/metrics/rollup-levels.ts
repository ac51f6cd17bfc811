/**
 * Level series (raw columns) of long windows from time rollups: whole 5-minute and 1-hour cells inside each
 * bucket, raw rows for the rest (rollup-plan.ts), merged in the datastore into one point per bucket. A series
 * is taken only where it is provably the pipeline's: its first bucket has a value (so no sample before the
 * window matters), and repeating values into empty buckets comes out the same for every interval the
 * pipeline could judge gaps by. Otherwise the metric is left to the raw paths.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchBucketLevels } from "../datastore/level-rollups.ts";
import { levelColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Aggregation } from "./aggregate.ts";
import { type Buckets, bucketOf } from "./buckets.ts";
import { planRollupReads } from "./rollup-plan.ts";
import type { MetricRequest } from "./metric-names.ts";
import { seriesFromLevels } from "./series.ts";

/** Below this share of the window in whole cells, raw rows are read as before. */
export const MIN_COVERED_SHARE = 0.5;

export interface RollupQuery {
  probe: ProbeDefinition;
  metrics: readonly MetricRequest[];
  connectionIds: readonly number[];
  buckets: Buckets;
  intervalSeconds: number;
  aggregation: Aggregation;
  /** From when the rollups of every connection are complete (epoch ms). */
  levelsFrom: number;
}

const sameSeries = (a: ReadonlyArray<number | null>, b: ReadonlyArray<number | null>) => a.every((v, i) => Object.is(v, b[i]));

/** Per metric answered: its series per connection. Metrics not in the map need another path. */
export async function seriesFromRollups(db: Queryable, q: RollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const levels = new Set(levelColumns(q.probe).map((c) => c.name));
  const candidates = q.metrics.filter((m) => m.form === "raw" && levels.has(m.metric));
  if (candidates.length === 0) return answered;
  const plan = planRollupReads(q.buckets, q.levelsFrom);
  if (plan.covered < MIN_COVERED_SHARE) return answered;
  const columns = [...new Set(candidates.map((m) => m.metric))];
  const points = await fetchBucketLevels(db, { probe: q.probe, columns, connectionIds: q.connectionIds, plan });
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const inWindow = points.get(id)![columns.indexOf(m.metric)];
      if (inWindow.length === 0 || bucketOf(q.buckets, inWindow[0].t) !== 0) break;
      const series = (judgedInterval: number) => seriesFromLevels({ inWindow, prior: undefined, buckets: q.buckets, judgedInterval, aggregation: q.aggregation });
      // The pipeline judges by max(interval, median spacing): any value from the interval up.
      const shortest = series(q.intervalSeconds * 1000);
      if (!sameSeries(shortest, series(Number.POSITIVE_INFINITY))) break;
      perConnection.set(id, shortest);
    }
    if (perConnection.size === q.connectionIds.length) answered.set(m, perConnection);
  }
  return answered;
}
