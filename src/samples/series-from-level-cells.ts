/**
 * Level series (raw columns) of long windows from time rollups: whole 5-minute and 1-hour cells inside each
 * bucket, raw rows for the rest (rollup-plan.ts), merged in the datastore into one point per bucket. A series
 * is taken only where it is provably the pipeline's: its first bucket has a value (so no sample before the
 * window matters) or the sample it would carry in is known (the borrowed span is read as bucket -1), and
 * repeating values into empty buckets is judged by the pipeline's own interval (bounded by the samples' count,
 * read from the recorded changes only when that does not settle it). Otherwise the metric is left to the raw
 * paths.
 */
import type { Queryable } from "../../drivers/types.ts";
import { fetchBucketLevels } from "./level-cells.ts";
import { judgedFromBounds, sampleBounds, sampleSpacings } from "./read-changes.ts";
import { cumulativeColumns, levelColumns } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import { type Buckets, bucketOf } from "../metrics/buckets.ts";
import { ROLLUP_CELLS_MS, type RollupPlan, firstInstant, needsOnlySums, rollupPlanFor, withSpanBefore } from "../metrics/rollup-plan.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { type LevelPoint, borrowLimitMs, seriesFromLevels } from "../metrics/series.ts";

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
 * What the pipeline judges a series' repeats into empty buckets by (the larger of the collection interval and the
 * median spacing of the samples in the window), as far as it is known: an upper bound, read cheaply, and the
 * interval itself; undefined where it cannot be told.
 */
export interface Judge {
  atMost(): Promise<number | undefined>;
  exactly(): Promise<number | undefined>;
}

/** A connection's samples in the window and the interval judged by its spacing there. */
export interface Spacing {
  samples: number;
  judged: number;
}

/**
 * Per connection, its samples in the window (counted alike by both reads) and the judged interval: at most the
 * longest spacing there (sampleBounds: the change cells for whole hours), exactly the collection interval where
 * those bounds show few intervals longer than it (a collector stopped a while), else by the median
 * (sampleSpacings: every recorded change). Each read once, when first asked; undefined for a probe without
 * recorded changes.
 */
export function connectionSpacing(
  db: Queryable,
  q: Pick<RollupQuery, "probe" | "connectionIds" | "buckets" | "intervalSeconds" | "levelsFrom">,
): (id: number) => { atMost(): Promise<Spacing | undefined>; exactly(): Promise<Spacing | undefined> } {
  let bounds: ReturnType<typeof sampleBounds> | undefined;
  let spacings: ReturnType<typeof sampleSpacings> | undefined;
  const recorded = cumulativeColumns(q.probe).length > 0;
  const intervalMs = q.intervalSeconds * 1000;
  const judged = (spacing: number | null | undefined) => Math.max(intervalMs, spacing ?? 0);
  const boundsOf = async (id: number) => {
    bounds ??= sampleBounds(db, q.probe, q.connectionIds, { from: q.buckets.start, to: q.buckets.end, cellsFrom: q.levelsFrom, intervalMs });
    return (await bounds).get(id);
  };
  return (id) => ({
    atMost: async () => {
      if (!recorded) return undefined;
      const found = await boundsOf(id);
      return { samples: found?.samples ?? 0, judged: judged(found?.longest) };
    },
    exactly: async () => {
      if (!recorded) return undefined;
      const known = await boundsOf(id);
      const byBounds = known && judgedFromBounds(known, intervalMs);
      if (known && byBounds !== undefined) return { samples: known.samples, judged: byBounds };
      spacings ??= sampleSpacings(db, q.probe, q.connectionIds, q.buckets.start, q.buckets.end);
      const found = (await spacings).get(id);
      return { samples: found?.samples ?? 0, judged: judged(found?.median) };
    },
  });
}

/** connectionSpacing's judged interval alone, as a Judge per connection. */
export function connectionJudge(db: Queryable, q: Parameters<typeof connectionSpacing>[1]): (id: number) => Judge {
  const spacing = connectionSpacing(db, q);
  return (id) => ({ atMost: async () => (await spacing(id).atMost())?.judged, exactly: async () => (await spacing(id).exactly())?.judged });
}

/**
 * A level series from one point per bucket (merged facts), where provably the pipeline's: the first bucket has a
 * value, or the sample before the window it would repeat is known (`prior`: its level point, null where there is
 * none in the span borrowed from, undefined where unknown); and repeating values into empty buckets is judged as
 * the pipeline judges it. An empty bucket repeats the last value while within REPEAT_INTERVALS judged intervals of
 * it, so where two judged intervals give the same series, so does every one between them: the collection interval
 * and no limit, then the collection interval and two upper bounds, one known without a read (medianSpacingAtMost
 * of `samples`: the samples the pipeline judges by number at least this many) and the judge's, and only then the
 * judged interval itself (undefined where the judge cannot tell).
 */
export async function judgedLevelSeries(
  inWindow: LevelPoint[],
  q: Pick<RollupQuery, "buckets" | "intervalSeconds" | "aggregation">,
  judge: Judge,
  { samples, prior }: { samples: number; prior?: LevelPoint | null },
): Promise<Array<number | null> | undefined> {
  const firstEmpty = inWindow.length === 0 || bucketOf(q.buckets, inWindow[0].t) !== 0;
  if (firstEmpty && prior === undefined) return undefined;
  const series = (judgedInterval: number) =>
    seriesFromLevels({ inWindow, prior: prior ?? undefined, buckets: q.buckets, judgedInterval, aggregation: q.aggregation });
  const shortest = series(q.intervalSeconds * 1000);
  const agrees = (judgedInterval: number) => series(judgedInterval).every((v, i) => Object.is(v, shortest[i]));
  if (agrees(Number.POSITIVE_INFINITY)) return shortest;
  const counted = medianSpacingAtMost(q.buckets, samples);
  if (counted !== undefined && agrees(counted)) return shortest;
  const bound = await judge.atMost();
  if (bound !== undefined && agrees(bound)) return shortest;
  const exact = await judge.exactly();
  return exact === undefined ? undefined : series(exact);
}

/**
 * The sample before the window the pipeline would repeat into it, from the span it borrows from read as one
 * bucket: none where the span has no sample, the span's merged point where it has one sample, else unknown.
 */
const priorFromSpan = (samples: number, point: LevelPoint | undefined): LevelPoint | null | undefined =>
  samples === 0 ? null : samples === 1 ? (point ?? null) : undefined;

/**
 * An upper bound of the median spacing of `samples` samples in the window, from their count alone: their spacings
 * add up to at most the window, and at least half of them (rounded up) are no shorter than the median.
 */
export function medianSpacingAtMost(b: Pick<Buckets, "start" | "end">, samples: number): number | undefined {
  const atLeastMedian = Math.ceil((samples - 1) / 2);
  return atLeastMedian > 0 ? (b.end - b.start) / atLeastMedian : undefined;
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
  // The span the pipeline borrows a sample from is read too, for a first bucket without one (a connection newer
  // than the window): a few more cells.
  const spanned = withSpanBefore(plan, q.buckets, q.buckets.start - borrowLimitMs(q.buckets), q.levelsFrom, { subtract: needsOnlySums(q.aggregation) });
  const { points, samples, samplesBefore, pointsBefore } = await fetchBucketLevels(db, {
    probe: q.probe,
    columns,
    connectionIds: q.connectionIds,
    plan: spanned,
  });
  const judged = connectionJudge(db, q);
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const c = columns.indexOf(m.metric);
      const inWindow = bucketLevelPoints(q.buckets, points.get(id)![c]);
      const prior = priorFromSpan(samplesBefore.get(id)!, pointsBefore.get(id)![c]);
      const series = inWindow && (await judgedLevelSeries(inWindow, q, judged(id), { samples: samples.get(id)!, prior }));
      if (!series) break;
      perConnection.set(id, series);
    }
    if (perConnection.size === q.connectionIds.length) answered.set(m, perConnection);
  }
  return answered;
}
