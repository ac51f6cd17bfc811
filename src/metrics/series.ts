/**
 * Rows in, series out: the reference implementation of every rule of the REST metrics query
 * for one connection. Pure: no I/O, no clock.
 */
import type { ProbeDefinition } from "../probes/types.ts";
import { type Aggregation, aggregate } from "./aggregate.ts";
import { type Buckets, bucketOf, pointTime } from "./buckets.ts";
import { type Interval, intervalsFor } from "./intervals.ts";
import type { MetricRequest } from "./metric-names.ts";
import { type Sample, median } from "./samples.ts";

export interface SeriesInput {
  probe: ProbeDefinition;
  metrics: readonly MetricRequest[];
  /** The connection's samples in time order; those before the window are candidates for borrowing. */
  samples: readonly Sample[];
  buckets: Buckets;
  intervalSeconds: number;
  aggregation: Aggregation;
}

const MIN_BORROW_MS = 30 * 60 * 1000;
const REPEAT_INTERVALS = 3;
const GAP_INTERVALS = 3;

/** How far before the window start a prior sample may be borrowed from. */
export function borrowLimitMs(b: Buckets): number {
  return Math.max(3 * b.width, MIN_BORROW_MS);
}

interface Context {
  input: SeriesInput;
  inWindow: Sample[];
  prior: Sample | undefined;
  /** I' in ms: the interval widened to the median spacing of the samples in the window. */
  judgedInterval: number;
}

/** I': the collection interval, widened to the median spacing of in-window samples. */
export function judgedIntervalMs(intervalSeconds: number, inWindowSpacings: readonly number[]): number {
  return Math.max(intervalSeconds * 1000, median(inWindowSpacings) ?? 0);
}

function context(input: SeriesInput): Context {
  const { start, end } = input.buckets;
  const inWindow = input.samples.filter((s) => s.t >= start && s.t <= end);
  const before = input.samples.filter((s) => s.t < start && s.t >= start - borrowLimitMs(input.buckets));
  return {
    input,
    inWindow,
    prior: before[before.length - 1],
    judgedInterval: judgedIntervalMs(
      input.intervalSeconds,
      inWindow.slice(1).map((s, i) => s.t - inWindow[i].t),
    ),
  };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : typeof v === "number" ? v : Number(v));

/**
 * What one sample contributes to a level metric (a raw column or dead_tuple_ratio): the count, sum, minimum,
 * maximum and last (in entity order) of its non-null values. Buckets combine these partials, so the same
 * series comes out whether partials are computed here from rows or by the datastore (metrics/level-sql.ts).
 */
export interface LevelPoint {
  t: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  last: number;
}

export function levelPoint(t: number, values: readonly number[]): LevelPoint {
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { t, count: values.length, sum, min, max, last: values[values.length - 1] ?? Number.NaN };
}

/** 100 * dead / (live + dead) over the rows with both figures; no value when there are no tuples. */
export function deadTupleValues(dead: number, total: number): number[] {
  return total > 0 ? [(100 * dead) / total] : [];
}

/** The level point of one sample, from its rows. */
export function levelPointOf(metric: MetricRequest, sample: Sample): LevelPoint {
  if (metric.form === "dead_tuple_ratio") {
    let dead = 0;
    let total = 0;
    for (const r of sample.rows) {
      const d = num(r.n_dead_tup);
      const l = num(r.n_live_tup);
      if (d === null || l === null) continue;
      dead += d;
      total += d + l;
    }
    return levelPoint(sample.t, deadTupleValues(dead, total));
  }
  const values: number[] = [];
  for (const r of sample.rows) {
    const v = num(r[metric.metric]);
    if (v !== null) values.push(v);
  }
  return levelPoint(sample.t, values);
}

/** The partials of each bucket's level points, added in time order (those without values skipped). */
class LevelBuckets {
  private readonly count: Float64Array;
  private readonly sum: Float64Array;
  private readonly min: Float64Array;
  private readonly max: Float64Array;
  private readonly last: Float64Array;
  constructor(n: number) {
    this.count = new Float64Array(n);
    this.sum = new Float64Array(n);
    this.min = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    this.max = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
    this.last = new Float64Array(n).fill(Number.NaN);
  }
  add(k: number, p: LevelPoint): void {
    if (p.count === 0) return;
    this.count[k] += p.count;
    this.sum[k] += p.sum;
    if (p.min < this.min[k]) this.min[k] = p.min;
    if (p.max > this.max[k]) this.max[k] = p.max;
    this.last[k] = p.last;
  }
  value(k: number, how: Aggregation): number | null {
    if (this.count[k] === 0) return null;
    switch (how) {
      case "avg":
        return this.sum[k] / this.count[k];
      case "sum":
        return this.sum[k];
      case "min":
        return this.min[k];
      case "max":
        return this.max[k];
      case "last":
        return this.last[k];
    }
  }
}

export interface LevelSeriesInput {
  /** Level points of the samples in the window, in time order (samples without values included). */
  inWindow: readonly LevelPoint[];
  /** The borrowed sample before the window, if any. */
  prior: LevelPoint | undefined;
  buckets: Buckets;
  judgedInterval: number;
  aggregation: Aggregation;
}

/** Raw columns and dead_tuple_ratio: combine per bucket, repeat the last value for up to 3 intervals. */
export function seriesFromLevels({ inWindow, prior, buckets: b, judgedInterval, aggregation }: LevelSeriesInput): Array<number | null> {
  // Each bucket's points added as they come, into arrays of partials rather than an array of points per bucket
  // (a day of 20 databases in 150 buckets asks for this 40 times a request).
  const perBucket = new LevelBuckets(b.n + 1);
  const lastSeen = new Float64Array(b.n + 1).fill(Number.NaN);
  for (const p of inWindow) {
    if (p.count === 0) continue;
    const k = bucketOf(b, p.t);
    perBucket.add(k, p);
    lastSeen[k] = p.t;
  }
  // The latest value and its time, repeated into empty buckets for up to three judged intervals.
  let carried: number | null = null;
  let carriedAt = Number.NaN;
  if (prior) {
    const before = new LevelBuckets(1);
    before.add(0, prior);
    carried = before.value(0, aggregation);
    carriedAt = prior.t;
  }
  const repeatFor = REPEAT_INTERVALS * judgedInterval;
  const series: Array<number | null> = new Array(b.n + 1);
  for (let k = 0; k <= b.n; k++) {
    const value = perBucket.value(k, aggregation);
    if (value !== null) {
      carried = value;
      carriedAt = lastSeen[k];
    }
    series[k] = value ?? (carried !== null && pointTime(b, k) - carriedAt <= repeatFor ? carried : null);
  }
  return series;
}

function levelSeries(ctx: Context, metric: MetricRequest): Array<number | null> {
  return seriesFromLevels({
    inWindow: ctx.inWindow.map((s) => levelPointOf(metric, s)),
    prior: ctx.prior && levelPointOf(metric, ctx.prior),
    buckets: ctx.input.buckets,
    judgedInterval: ctx.judgedInterval,
    aggregation: ctx.input.aggregation,
  });
}

export interface ChangeSeriesInput {
  form: MetricRequest["form"];
  /** Intervals ending in the window, the first possibly starting at the borrowed prior sample. */
  intervals: readonly Interval[];
  buckets: Buckets;
  judgedInterval: number;
  aggregation: Aggregation;
}

/** `_per_sec`, `_pct`, `_sessions`, `_delta` from per-interval changes; an interval over 3 x I' is a gap. */
export function seriesFromIntervals({ form, intervals, buckets: b, judgedInterval, aggregation }: ChangeSeriesInput): Array<number | null> {
  const rates: number[][] = Array.from({ length: b.n + 1 }, () => []);
  const deltas: Array<number | null> = new Array(b.n + 1).fill(null);
  const spanned: boolean[] = new Array(b.n + 1).fill(false);
  for (const iv of intervals) {
    const span = iv.to - iv.from;
    if (span > GAP_INTERVALS * judgedInterval) continue; // a gap: null for every form
    const k = bucketOf(b, iv.to);
    deltas[k] = (deltas[k] ?? 0) + (iv.change ?? 0);
    // Buckets lying wholly inside an accepted interval have no samples of their own: their _delta is 0, not null.
    for (let j = iv.from < b.start ? 0 : bucketOf(b, iv.from) + 1; j < k; j++) spanned[j] = true;
    if (iv.change === null) continue; // no valid change: null for the rates
    if (form === "per_sec") rates[k].push(iv.change / (span / 1000));
    else if (form === "pct") rates[k].push((100 * iv.change) / span);
    else if (form === "sessions") rates[k].push(iv.change / span);
  }
  if (form === "delta") return deltas.map((d, k) => d ?? (spanned[k] ? 0 : null));
  return rates.map((values) => aggregate(values, aggregation));
}

function changeSeries(ctx: Context, metric: MetricRequest): Array<number | null> {
  const { buckets, aggregation, probe } = ctx.input;
  const sequence = ctx.prior ? [ctx.prior, ...ctx.inWindow] : ctx.inWindow;
  const intervals = intervalsFor(probe, metric.metric, sequence);
  return seriesFromIntervals({ form: metric.form, intervals, buckets, judgedInterval: ctx.judgedInterval, aggregation });
}

/** One value per point (n + 1) for each requested metric, in request order. */
export function computeSeries(input: SeriesInput): Array<Array<number | null>> {
  const ctx = context(input);
  return input.metrics.map((m) => (m.form === "raw" || m.form === "dead_tuple_ratio" ? levelSeries(ctx, m) : changeSeries(ctx, m)));
}
