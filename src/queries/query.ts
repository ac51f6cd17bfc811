/** A metrics query end to end: check and plan the request, read its facts once, run the pure pipeline. */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { type Buckets, pointTimes } from "../metrics/buckets.ts";
import type { MetricRequest } from "../metrics/metric-names.ts";
import { type MetricsPlan, type MetricsRequest, checkMetricsRequest, planMetrics } from "../metrics/metrics-plan.ts";
import { seriesFromFacts } from "../metrics/series-from-facts.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { readFacts } from "../samples/read-facts.ts";
import { type MetricsContextCache, readableContext } from "./metrics-context.ts";

export interface MetricsQuery extends Omit<MetricsRequest, "groupBy"> {
  /** The caller's rights; connections it cannot read answer 403. Absent for trusted internal use. */
  access?: Authority;
  /** This instance's recently read connection facts (REST requests); absent: always read. */
  contextCache?: MetricsContextCache;
}

export interface MetricSeries {
  name: string;
  metric: string;
  unit: MetricRequest["unit"];
  connection_id: number;
  data: Array<{ time: string; value: number | null }>;
}

export interface MetricsResult {
  probe: ProbeDefinition;
  metrics: MetricRequest[];
  buckets: Buckets;
  intervalSeconds: number;
  series: MetricSeries[];
}

/** Checks the request, reads what the datastore says about its connections (and the caller's rights), plans. */
export async function planMetricsQuery(db: Queryable, q: MetricsQuery & Pick<MetricsRequest, "groupBy">): Promise<MetricsPlan> {
  const checked = checkMetricsRequest(q);
  return planMetrics(q, checked, await readableContext(db, checked.probe.name, q.connectionIds, q.access, q.contextCache));
}

export async function runMetricsQuery(db: Queryable, q: MetricsQuery): Promise<MetricsResult> {
  const plan = await planMetricsQuery(db, q);
  const values = seriesFromFacts(plan, await readFacts(db, plan));
  const times = pointTimes(plan.buckets);
  // Metrics in request order, then connections in request order.
  const series = plan.metrics.flatMap((m, i) =>
    q.connectionIds.map((id) => ({
      name: m.name,
      metric: m.metric,
      unit: m.unit,
      connection_id: id,
      data: times.map((time, k) => ({ time, value: values.get(id)!.get("")![i][k] })),
    })),
  );
  return { probe: plan.probe, metrics: plan.metrics, buckets: plan.buckets, intervalSeconds: plan.intervalSeconds, series };
}
