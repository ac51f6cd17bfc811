/**
 * Level series (raw columns) of long windows from time rollups: whole 5-minute and 1-hour cells inside each
 * bucket, raw rows for the rest (rollup-plan.ts), merged in the datastore into one point per bucket. A series
 * is taken only where it is provably the pipeline's: its first bucket has a value (so no sample before the
 * window matters), and repeating values into empty buckets is judged by the pipeline's own interval (read
 * from the recorded changes only when it matters). Otherwise the metric is left to the raw paths.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchBucketLevels } from "../datastore/level-rollups.ts";
import { sampleSpacings } from "../datastore/changes-repository.ts";
import { cumulativeColumns, levelColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Aggregation } from "./aggregate.ts";
import { type Buckets, bucketOf } from "./buckets.ts";
import { ROLLUP_CELLS_MS, type RollupPlan, firstInstant, needsOnlySums, rollupPlanFor } from "./rollup-plan.ts";
import type { MetricRequest } from "./metric-names.ts";
import { type LevelPoint, seriesFromLevels } from "./series.ts";

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

/**
 * Per connection, its samples in the window and the interval the pipeline judges repeats by there: the larger of
 * the collection interval and the median spacing. Read from the recorded changes once, when first asked;
 * undefined for a probe without recorded changes.
 */
export function connectionSpacing(
  db: Queryable,
  q: Pick<RollupQuery, "probe" | "connectionIds" | "buckets" | "intervalSeconds">,
): (id: number) => Promise<{ samples: number; judged: number } | undefined> {
  let spacings: ReturnType<typeof sampleSpacings> | undefined;
  return async (id) => {
    if (cumulativeColumns(q.probe).length === 0) return undefined;
    spacings ??= sampleSpacings(db, q.probe, q.connectionIds, q.buckets.start, q.buckets.end);
    const found = (await spacings).get(id);
    return { samples: found?.samples ?? 0, judged: Math.max(q.intervalSeconds * 1000, found?.median ?? 0) };
  };
}

/** connectionSpacing's judged interval alone. */
export function connectionJudge(db: Queryable, q: Parameters<typeof connectionSpacing>[1]): (id: number) => Promise<number | undefined> {
  const spacing = connectionSpacing(db, q);
  return async (id) => (await spacing(id))?.judged;
}

/**
 * A level series from one point per bucket (merged facts), where provably the pipeline's: the first bucket has a
 * value (no sample before the window matters), and repeating values into empty buckets is judged as the pipeline
 * judges it. Where the answer is the same for any judged interval from the collection interval up, `judged` is
 * not asked; where it is asked and cannot say (undefined), so is the answer.
 */
export async function judgedLevelSeries(
  inWindow: LevelPoint[],
  q: Pick<RollupQuery, "buckets" | "intervalSeconds" | "aggregation">,
  judged: () => Promise<number | undefined>,
): Promise<Array<number | null> | undefined> {
  if (inWindow.length === 0 || bucketOf(q.buckets, inWindow[0].t) !== 0) return undefined;
  const series = (judgedInterval: number) => seriesFromLevels({ inWindow, prior: undefined, buckets: q.buckets, judgedInterval, aggregation: q.aggregation });
  const shortest = series(q.intervalSeconds * 1000);
  if (series(Number.POSITIVE_INFINITY).every((v, i) => Object.is(v, shortest[i]))) return shortest;
  const exact = await judged();
  return exact === undefined ? undefined : series(exact);
}

/**
 * Buckets' merged level facts as one point each, in bucket order, each point's time in its own bucket. A bucket
 * that read a cell less its parts in later buckets shows the cell's latest time when that lies in a later part:
 * its own latest time is then unknown, which matters only where the next bucket has no value (the pipeline would
 * repeat this one's from that time): then undefined. (The later part is the next bucket's, and holds a value,
 * wherever buckets are at least half a cell wide: rollupPlanFor takes 30 minutes.)
 */
export function bucketLevelPoints(b: Buckets, buckets: ReadonlyArray<{ k: number; point: LevelPoint }>): LevelPoint[] | undefined {
  const sorted = [...buckets].sort((x, y) => x.k - y.k);
  const points: LevelPoint[] = [];
  for (const [i, { k, point }] of sorted.entries()) {
    if (bucketOf(b, point.t) === k) points.push(point);
    else if (k < b.n && sorted[i + 1]?.k !== k + 1) return undefined;
    else points.push({ ...point, t: firstInstant(b, k) });
  }
  return points;
}

/** The plan of a level or change rollup read: cut cells read whole less their parts where only counts and sums matter. */
export function connectionPlanFor(q: Pick<RollupQuery, "buckets" | "levelsFrom" | "aggregation">): RollupPlan | undefined {
  return rollupPlanFor(q.buckets, q.levelsFrom, ROLLUP_CELLS_MS, { subtract: needsOnlySums(q.aggregation) });
}

/** Per metric answered: its series per connection. Metrics not in the map need another path. */
export async function seriesFromLevelCells(db: Queryable, q: RollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const levels = new Set(levelColumns(q.probe).map((c) => c.name));
  const candidates = q.metrics.filter((m) => m.form === "raw" && levels.has(m.metric));
  if (candidates.length === 0) return answered;
  const plan = connectionPlanFor(q);
  if (!plan) return answered;
  const columns = [...new Set(candidates.map((m) => m.metric))];
  const points = await fetchBucketLevels(db, { probe: q.probe, columns, connectionIds: q.connectionIds, plan });
  const judged = connectionJudge(db, q);
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const inWindow = bucketLevelPoints(q.buckets, points.get(id)![columns.indexOf(m.metric)]);
      const series = inWindow && (await judgedLevelSeries(inWindow, q, () => judged(id)));
      if (!series) break;
      perConnection.set(id, series);
    }
    if (perConnection.size === q.connectionIds.length) answered.set(m, perConnection);
  }
  return answered;
}
