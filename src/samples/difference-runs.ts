/**
 * The counted intervals of a read by difference (read-by-difference.ts), from the changes' times: which intervals
 * count (the gap rule), which bucket each ends in, and the runs of consecutive intervals within one bucket whose
 * change is the difference of the two ends' cumulative values. Pure: no reads.
 */
import { type Buckets, bucketOf } from "../metrics/buckets.ts";
import type { EvenChanges, Segment } from "./read-changes.ts";

/** A gap is more than this many collection intervals (the specification's rule). */
export const GAP_INTERVALS = 3;

export interface Interval {
  from: number;
  to: number;
}

/**
 * The counted intervals in time order, by index: listed where the changes were read, computed where they are
 * evenly spaced (a month holds tens of thousands: an object each was most of such a read's time).
 */
export interface Intervals {
  readonly length: number;
  from(i: number): number;
  to(i: number): number;
  bucket(i: number): number;
  /** Set where every interval is this long. */
  spacing?: number;
}

/**
 * A maximal chain of counted intervals within one bucket, by position in the chain; only its first interval
 * can begin in an earlier bucket.
 */
export interface Run {
  bucket: number;
  length: number;
  from(i: number): number;
  to(i: number): number;
}

/** countedIntervals over evenly spaced changes, by the same rules without a list of them (the median is the spacing). */
export function evenIntervals(even: EvenChanges, b: Buckets, intervalMs: number, borrowFrom: number): { first: number; intervals: Intervals } {
  const { first: firstEnd, spacing, count } = even;
  let i = 0; // the first change whose previous sample is within the borrow limit
  while (i < count && firstEnd + (i - 1) * spacing < borrowFrom) i++;
  const first = i < count ? firstEnd + (i - 1) * spacing : firstEnd;
  const someInWindow = firstEnd + (count - 2) * spacing >= b.start; // the last change's previous sample
  const judged = Math.max(intervalMs, someInWindow ? spacing : 0);
  while (i < count && firstEnd + i * spacing < b.start) i++; // the first change ending in the window
  const counted = spacing > GAP_INTERVALS * judged ? 0 : count - i;
  const to = (j: number) => firstEnd + (i + j) * spacing;
  return { first, intervals: { length: counted, from: (j) => to(j) - spacing, to, bucket: (j) => bucketOf(b, to(j)), spacing } };
}

/** The first index of a segment's changes (0..count) whose previous sample is at least `t`. */
function firstFromAtLeast(g: Segment, t: number): number {
  let i = Math.min(g.count, Math.max(0, Math.ceil((t - g.from) / g.spacing)));
  while (i > 0 && g.from + (i - 1) * g.spacing >= t) i--;
  while (i < g.count && g.from + i * g.spacing < t) i++;
  return i;
}

/**
 * countedIntervals over changes in segments of one length, by the same rules without a list of them: the median
 * from the segments' lengths and counts, the counted ones in typed arrays (a month of minutes, a few missed rounds).
 */
export function segmentIntervals(segments: readonly Segment[], b: Buckets, intervalMs: number, borrowFrom: number): { first: number; intervals: Intervals } {
  const found = segments.find((g) => firstFromAtLeast(g, borrowFrom) < g.count);
  const first = found
    ? found.from + firstFromAtLeast(found, borrowFrom) * found.spacing
    : segments.length > 0
      ? segments[0].from + segments[0].spacing
      : Number.NaN;
  // The median spacing of the intervals starting in the window: the middle one or two of them in length order.
  const lengths = segments
    .map((g) => [g.spacing, g.count - firstFromAtLeast(g, b.start)])
    .filter(([, n]) => n > 0)
    .sort(([x], [y]) => x - y);
  const total = lengths.reduce((sum, [, n]) => sum + n, 0);
  const nth = (k: number) => {
    for (let [i, seen] = [0, 0]; ; seen += lengths[i][1], i++) if (k < seen + lengths[i][1]) return lengths[i][0];
  };
  const median = total === 0 ? 0 : total % 2 ? nth(total >> 1) : (nth((total >> 1) - 1) + nth(total >> 1)) / 2;
  const judged = Math.max(intervalMs, median);
  const counted = segments
    .filter((g) => g.spacing <= GAP_INTERVALS * judged)
    .map((g) => ({ g, lo: Math.max(firstFromAtLeast(g, borrowFrom), firstFromAtLeast(g, b.start - g.spacing)) }))
    .filter(({ g, lo }) => lo < g.count);
  const length = counted.reduce((sum, { g, lo }) => sum + g.count - lo, 0);
  const [froms, tos, buckets] = [new Float64Array(length), new Float64Array(length), new Int32Array(length)];
  let j = 0;
  for (const { g, lo } of counted) {
    for (let i = lo; i < g.count; i++, j++) {
      froms[j] = g.from + i * g.spacing;
      tos[j] = froms[j] + g.spacing;
      buckets[j] = bucketOf(b, tos[j]);
    }
  }
  const spacing = counted.every(({ g }) => g.spacing === counted[0].g.spacing) && counted.length > 0 ? counted[0].g.spacing : undefined;
  return { first, intervals: { length, from: (i) => froms[i], to: (i) => tos[i], bucket: (i) => buckets[i], spacing } };
}

/** The counted interval ending at a time, by binary search (intervals are in time order). */
export function intervalsByEnd(intervals: Intervals): { get(to: number): Interval | undefined; has(to: number): boolean } {
  const find = (to: number) => {
    const i = lastAtMost(intervals.length, intervals.to, to);
    return i >= 0 && intervals.to(i) === to ? { from: intervals.from(i), to } : undefined;
  };
  return { get: find, has: (to) => find(to) !== undefined };
}

/** The last index in [0, length) whose key (ascending) is at most `t`, by binary search; -1 when none. */
export function lastAtMost(length: number, key: (i: number) => number, t: number): number {
  let [lo, hi] = [0, length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key(mid) <= t) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi;
}

/**
 * Maximal chains of counted intervals within one bucket, of one length where `sameLength` (a rate is the mean of
 * per-interval rates: a chain of one length gives their sum as its change over that length).
 */
export function runsOf(intervals: Intervals, sameLength: boolean): Run[] {
  const runs: Run[] = [];
  const runFrom = (start: number, end: number): Run => ({
    bucket: intervals.bucket(start),
    length: end - start,
    from: (i) => intervals.from(start + i),
    to: (i) => intervals.to(start + i),
  });
  const length = (j: number) => intervals.to(j) - intervals.from(j);
  let [start, bucket] = [0, intervals.length > 0 ? intervals.bucket(0) : 0];
  for (let i = 1; i <= intervals.length; i++) {
    const chained = i < intervals.length && intervals.bucket(i) === bucket && intervals.to(i - 1) === intervals.from(i);
    if (chained && (!sameLength || intervals.spacing !== undefined || length(i) === length(i - 1))) continue;
    runs.push(runFrom(start, i));
    if (i < intervals.length) [start, bucket] = [i, intervals.bucket(i)];
  }
  return runs;
}
