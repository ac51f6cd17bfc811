/**
 * Level series (raw columns) of long windows from time rollups: whole 5-minute and 1-hour cells inside each
 * bucket, raw rows for the rest (rollup-plan.ts), merged in the datastore into one point per bucket. A series
 * is taken only where it is provably the pipeline's: its first bucket has a value (so no sample before the
 * window matters), and repeating values into empty buckets is judged by the pipeline's own interval (read
 * from the recorded changes only when it matters). Otherwise the metric is left to the raw paths.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchBucketLevels } from "../datastore/level-rollups.ts";
import { medianSpacings } from "../datastore/changes-repository.ts";
import { cumulativeColumns, levelColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Aggregation } from "./aggregate.ts";
import { type Buckets, bucketOf } from "./buckets.ts";
import { rollupPlanFor } from "./rollup-plan.ts";
import type { MetricRequest } from "./metric-names.ts";
import { seriesFromLevels } from "./series.ts";

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
export async function seriesFromLevelCells(db: Queryable, q: RollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const levels = new Set(levelColumns(q.probe).map((c) => c.name));
  const candidates = q.metrics.filter((m) => m.form === "raw" && levels.has(m.metric));
  if (candidates.length === 0) return answered;
  const plan = rollupPlanFor(q.buckets, q.levelsFrom);
  if (!plan) return answered;
  const columns = [...new Set(candidates.map((m) => m.metric))];
  const points = await fetchBucketLevels(db, { probe: q.probe, columns, connectionIds: q.connectionIds, plan });
  // The pipeline judges repeats by max(interval, median spacing in the window). Where the answer is the same
  // for any value from the interval up, the median is not needed; otherwise it is read from the changes.
  let medians: Map<number, number> | undefined;
  const judged = async (id: number) => {
    if (cumulativeColumns(q.probe).length === 0) return undefined;
    medians ??= await medianSpacings(db, q.probe, q.connectionIds, q.buckets.start, q.buckets.end);
    return Math.max(q.intervalSeconds * 1000, medians.get(id) ?? 0);
  };
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const inWindow = points.get(id)![columns.indexOf(m.metric)];
      if (inWindow.length === 0 || bucketOf(q.buckets, inWindow[0].t) !== 0) break;
      const series = (judgedInterval: number) => seriesFromLevels({ inWindow, prior: undefined, buckets: q.buckets, judgedInterval, aggregation: q.aggregation });
      const shortest = series(q.intervalSeconds * 1000);
      if (sameSeries(shortest, series(Number.POSITIVE_INFINITY))) {
        perConnection.set(id, shortest);
        continue;
      }
      const exact = await judged(id);
      if (exact === undefined) break;
      perConnection.set(id, series(exact));
    }
    if (perConnection.size === q.connectionIds.length) answered.set(m, perConnection);
  }
  return answered;
}
