/**
 * Counter metrics (`_per_sec`, `_pct`, `_sessions`, `_delta`) of long windows from time rollups of the
 * per-sample changes: whole cells inside each bucket, `__changes` rows for the rest (rollup-plan.ts), merged in
 * the datastore into one set of facts per bucket. Taken only where the pipeline's gap rule is known to hold:
 * - every interval counted is at most `safe` long, three collection intervals or a bucket if shorter (so none is
 *   a gap, whatever spacing the pipeline judges by, the first starts within the borrow limit, and no bucket lies
 *   wholly inside one);
 * - the longer ones, left out as gaps, are longer than three times the larger of the interval and `safe`, and
 *   fewer than the counted ones less one: so at most `safe` is the median spacing the pipeline judges gaps by,
 *   and they are gaps by its rule too (a collector stopped for a while). Cells holding one are read raw.
 * Sums and averages of rates agree with the pipeline up to floating-point rounding.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type BucketChanges, fetchBucketChanges } from "./change-cells.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import type { Buckets } from "../metrics/buckets.ts";
import { type RollupQuery, connectionPlanFor } from "./series-from-level-cells.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";

/** A rate is change / interval length (ms) times this. */
export const RATE_FACTOR: Partial<Record<MetricRequest["form"], number>> = { per_sec: 1000, pct: 100, sessions: 1 };
const CHANGE_FORMS = new Set<MetricRequest["form"]>(["per_sec", "pct", "sessions", "delta"]);
const GAP_INTERVALS = 3;

/** The longest interval a rollup answer allows: then none is a gap, whatever spacing the pipeline judges by, and no bucket lies inside one. */
export const longestSafeIntervalMs = (intervalSeconds: number, b: Buckets) => Math.min(GAP_INTERVALS * intervalSeconds * 1000, b.width);

/** One metric's value in one bucket from its merged facts. */
export function bucketValue(form: MetricRequest["form"], aggregation: Aggregation, bucket: BucketChanges | undefined, column: number): number | null {
  if (!bucket || bucket.intervals === 0) return null;
  const c = bucket.columns[column];
  if (form === "delta") return c.sum ?? 0;
  if (c.n === 0) return null;
  const factor = RATE_FACTOR[form]!;
  switch (aggregation) {
    case "avg":
      return (factor * c.ratioSum) / c.n;
    case "sum":
      return factor * c.ratioSum;
    case "min":
      return factor * c.ratioMin;
    case "max":
      return factor * c.ratioMax;
    case "last":
      return factor * c.ratioLast;
  }
}

/** Per metric answered: its series per connection. Absent: the query needs the stored changes. */
export async function seriesFromChangeCells(db: Queryable, q: RollupQuery): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const candidates = q.metrics.filter((m) => CHANGE_FORMS.has(m.form));
  if (candidates.length === 0) return answered;
  const plan = connectionPlanFor(q);
  if (!plan) return answered;
  const columns = [...new Set(candidates.map((m) => m.metric))];
  const safe = longestSafeIntervalMs(q.intervalSeconds, q.buckets);
  const gaps = { over: GAP_INTERVALS * Math.max(q.intervalSeconds * 1000, safe), readRawOver: safe };
  const facts = await fetchBucketChanges(db, { probe: q.probe, columns, connectionIds: q.connectionIds, plan, gaps });
  for (const buckets of facts.values()) {
    if (buckets.some((b) => b.maxSpanMs > safe)) return answered;
    const counted = buckets.reduce((sum, b) => sum + b.intervals, 0);
    const left = buckets.reduce((sum, b) => sum + b.gaps, 0);
    if (left > 0 && counted <= left + 1) return answered;
  }
  for (const m of candidates) {
    const perConnection = new Map<number, Array<number | null>>();
    for (const id of q.connectionIds) {
      const byBucket = new Map(facts.get(id)!.map((b) => [b.k, b]));
      perConnection.set(
        id,
        Array.from({ length: q.buckets.n + 1 }, (_, k) => bucketValue(m.form, q.aggregation, byBucket.get(k), columns.indexOf(m.metric))),
      );
    }
    answered.set(m, perConnection);
  }
  return answered;
}
