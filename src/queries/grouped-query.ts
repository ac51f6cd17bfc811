/**
 * The metrics query with `group_by`: one series per metric per connection per entity group (each database,
 * each table, ...), each carrying its key fields, in key order; `top` keeps the groups with the largest total
 * of the first metric over the window. How the groups are read: samples/read-grouped-facts.ts.
 */
import type { Queryable } from "../../drivers/types.ts";
import { pointTimes } from "../metrics/buckets.ts";
import { seriesFromFacts } from "../metrics/series-from-facts.ts";
import { readFacts } from "../samples/read-facts.ts";
import { type MetricSeries, type MetricsQuery, planMetricsQuery } from "./query.ts";

export interface GroupedSeries extends MetricSeries {
  entity: Record<string, string | null>;
}

export const MAX_TOP = 100;

/** `how`: "pipeline" always computes from raw rows (the reference, for tests). */
export async function runGroupedMetricsQuery(
  db: Queryable,
  q: MetricsQuery & { groupBy: string; top?: number },
  how: "auto" | "pipeline" = "auto",
): Promise<GroupedSeries[]> {
  const plan = { ...(await planMetricsQuery(db, q)), reference: how === "pipeline" };
  const columns = plan.groupBy!;
  const values = seriesFromFacts(plan, await readFacts(db, plan));
  const perConnection = q.connectionIds.map((id) => {
    const groups = values.get(id)!;
    let keys = [...groups.keys()].sort();
    if (q.top !== undefined) {
      const total = (g: string) => groups.get(g)![0].reduce<number>((s, v) => s + (v ?? 0), 0);
      const kept = new Set([...keys].sort((a, b) => total(b) - total(a) || a.localeCompare(b)).slice(0, q.top));
      keys = keys.filter((g) => kept.has(g));
    }
    return { id, keys, groups };
  });

  const times = pointTimes(plan.buckets);
  // Metrics in request order, then connections in request order, then groups by key.
  return plan.metrics.flatMap((m, i) =>
    perConnection.flatMap(({ id, keys, groups }) =>
      keys.map((g) => ({
        name: m.name,
        metric: m.metric,
        unit: m.unit,
        connection_id: id,
        entity: Object.fromEntries(columns.map((c, j) => [c, (JSON.parse(g) as Array<string | null>)[j]])),
        data: times.map((time, k) => ({ time, value: groups.get(g)![i][k] })),
      })),
    ),
  );
}
