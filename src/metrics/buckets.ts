import { isoTime } from "./iso-time.ts";

/** Bucket layout: n buckets of width w, never narrower than the collection interval. */
export interface Buckets {
  start: number;
  end: number;
  /** Number of buckets; the series has n + 1 points, the last at the window end. */
  n: number;
  /** Bucket width in ms. */
  width: number;
}

export const DEFAULT_BUCKETS = 150;
export const MAX_BUCKETS = 500;

export function layoutBuckets(start: number, end: number, intervalSeconds: number, requested?: number): Buckets {
  let n = Math.min(MAX_BUCKETS, Math.max(1, Math.floor(requested ?? DEFAULT_BUCKETS)));
  n = Math.min(n, Math.max(1, Math.floor((end - start) / (intervalSeconds * 1000))));
  return { start, end, n, width: (end - start) / n };
}

const SUMMARY_BUCKETS = 60;
const SUMMARY_MIN_WIDTH_MS = 10_000;

/** The summary endpoints' layout (SPEC "Limits"): one sixtieth of the span per bucket, at least 10 s. */
export function summaryBuckets(start: number, end: number): Buckets {
  const n = Math.max(1, Math.min(SUMMARY_BUCKETS, Math.floor((end - start) / SUMMARY_MIN_WIDTH_MS)));
  return { start, end, n, width: (end - start) / n };
}

/** Time of point k (0..n). */
export function pointTime(b: Buckets, k: number): number {
  return k === b.n ? b.end : b.start + k * b.width;
}

/** The RFC 3339 time of each of the n + 1 points. */
export const pointTimes = (b: Buckets): string[] => Array.from({ length: b.n + 1 }, (_, k) => isoTime(pointTime(b, k)));

/** Index of the bucket holding time t: start + k*w <= t < start + (k+1)*w; t = end falls in bucket n. */
export function bucketOf(b: Buckets, t: number): number {
  if (t >= b.end) return b.n;
  return Math.min(b.n - 1, Math.floor((t - b.start) / b.width));
}
