/**
 * Counter series per entity group read by difference (samples/read-by-difference.ts): the grouped metrics
 * query's first path, and a filter's when the entity it names is in every sample (then the filtered sample
 * sequence is the connection's, and its series is its group's).
 */
import type { Queryable } from "../../drivers/types.ts";
import { differencedChanges } from "./read-by-difference.ts";
import type { GroupedChangeQuery } from "./grouped-change-query.ts";
import { bucketValues } from "./read-grouped-changes.ts";
import type { Aggregation } from "../metrics/aggregate.ts";
import { type Buckets, bucketOf } from "../metrics/buckets.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";

/** Forms whose mean per bucket follows from a group's summed changes and mean per-second rate (aggregation avg). */
export const DIFFERENCED_FORMS = new Set<MetricRequest["form"]>(["per_sec", "delta", "pct", "sessions"]);

/** Whether a metric is read by difference at this aggregation: a bucket's delta is its summed changes at any. */
export const differencedAt =
  (aggregation: Aggregation) =>
  (m: MetricRequest): boolean =>
    m.form === "delta" || (aggregation === "avg" && DIFFERENCED_FORMS.has(m.form));

/**
 * Tuning, not correctness: how many collection intervals wide buckets must be for a metrics query to read by
 * difference. Narrower buckets hold a few intervals each, so the rows at run ends are a third or more of every
 * sample's: the raw rows answer in one statement, where reading by difference takes three (lab, 6 hours of 20
 * databases in 144-second buckets: 17.5 ms by difference, 14.6 ms raw; 12 hours in 288-second buckets: 24 ms by
 * difference, 31 ms raw; an hour of 5-minute samples in 12 buckets: a dozen rows each way).
 */
export const NARROW_BUCKETS = { intervals: 3 };

/** Whether a metrics query reads counter series by difference over these buckets (NARROW_BUCKETS). */
export const wideEnoughToDifference = (b: Buckets, intervalSeconds: number): boolean => b.width > NARROW_BUCKETS.intervals * intervalSeconds * 1000;

/** What both readers take besides their own: the probe, the buckets, and how the changes may be read. */
type DifferencedOptions = Pick<GroupedChangeQuery, "probe" | "buckets" | "intervalSeconds" | "cellsFrom" | "onlyEven">;

/**
 * One connection's series per group (group key as JSON -> one value array per metric) from the writer's
 * differenced records instead of raw rows, with the groups present in every sample (`steady`); undefined where
 * those records cannot answer exactly (then the pipeline does).
 */
export async function differencedGroupSeries(
  db: Queryable,
  q: DifferencedOptions & { metrics: readonly MetricRequest[]; columns: string[]; filters: Record<string, string>; connectionId: number },
): Promise<{ series: Map<string, Array<Array<number | null>>>; steady: Set<string> } | undefined> {
  const bases = [...new Set(q.metrics.map((m) => m.metric))];
  const found = await differencedChanges(db, {
    probe: q.probe,
    connectionId: q.connectionId,
    columns: bases,
    groupBy: q.columns,
    buckets: q.buckets,
    intervalSeconds: q.intervalSeconds,
    filters: q.filters,
    rates: q.metrics.some((m) => m.form !== "delta"),
    cellsFrom: q.cellsFrom,
    onlyEven: q.onlyEven,
  });
  if (!found || found.runs.length === 0) return undefined;
  const b = q.buckets;
  // A bucket where an interval ends, or wholly inside one, has a _delta of 0 when nothing valid changed (series.ts);
  // only a run's first interval can begin in an earlier bucket.
  const zeroDelta = new Array<boolean>(b.n + 1).fill(false);
  for (const run of found.runs) {
    const [k, from] = [run.bucket, run.from(0)];
    zeroDelta[k] = true;
    for (let j = from < b.start ? 0 : bucketOf(b, from) + 1; j < k; j++) zeroDelta[j] = true;
  }
  const changes = new Map(found.groups.map((g) => [JSON.stringify(g.group), g]));
  const scale: Record<string, number> = { per_sec: 1, pct: 0.1, sessions: 0.001 }; // pct: 100 * change / ms; sessions: change / ms
  const series = new Map(
    found.allGroups.map((group) => {
      const g = changes.get(JSON.stringify(group));
      const series = q.metrics.map((m) => {
        const c = bases.indexOf(m.metric);
        if (m.form === "delta") return bucketValues(g?.delta[c] ?? new Map(), b).map((v, k) => v ?? (zeroDelta[k] ? 0 : null));
        return bucketValues(g?.rate[c] ?? new Map(), b).map((v) => (v === null ? null : v * scale[m.form]));
      });
      return [JSON.stringify(group), series];
    }),
  );
  return { series, steady: new Set(found.steadyGroups.map((g) => JSON.stringify(g))) };
}

/**
 * Per counter metric and connection, the series of the one entity `filters` names (every key of the probe),
 * read by difference (the caller passes the metrics differencedAt its aggregation); empty unless the entity is in
 * every sample read on every connection.
 */
export async function seriesOfSteadyEntity(
  db: Queryable,
  q: DifferencedOptions & { metrics: readonly MetricRequest[]; filters: Record<string, string>; connectionIds: readonly number[] },
): Promise<Map<MetricRequest, Map<number, Array<number | null>>>> {
  const answered = new Map<MetricRequest, Map<number, Array<number | null>>>();
  const metrics = q.metrics.filter((m) => DIFFERENCED_FORMS.has(m.form));
  if (metrics.length === 0 || q.probe.keys.length === 0 || !q.probe.keys.every((k) => k in q.filters) || !wideEnoughToDifference(q.buckets, q.intervalSeconds))
    return answered;
  const entity = JSON.stringify(q.probe.keys.map((k) => q.filters[k]));
  const perConnection = new Map<number, Array<Array<number | null>>>();
  for (const id of q.connectionIds) {
    const found = await differencedGroupSeries(db, { ...q, metrics, columns: [...q.probe.keys], connectionId: id });
    if (!found?.steady.has(entity)) return answered; // one path answers a metric for every connection
    perConnection.set(id, found.series.get(entity)!);
  }
  metrics.forEach((m, i) => answered.set(m, new Map([...perConnection].map(([id, series]) => [id, series[i]]))));
  return answered;
}
