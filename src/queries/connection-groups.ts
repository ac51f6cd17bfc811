/**
 * Client connections of one server over a window, counted per user, client address, database, application or
 * state from the pg_stat_activity samples. Each group's series is a level series of the metrics query (the
 * average count per bucket, the last value repeated across short gaps); a sample without the group counts 0.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { readableIntervals } from "./metrics-context.ts";
import { quoteIdent } from "../probes/ddl.ts";
import { layoutBuckets, pointTimes } from "../metrics/buckets.ts";
import { borrowLimitMs, judgedIntervalMs, levelPoint, seriesFromLevels } from "../metrics/series.ts";
import { round } from "../metrics/summary-values.ts";
import type { Window } from "../metrics/window.ts";
import { findProbe } from "../probes/index.ts";
import { samplesSql } from "../probes/history-ddl.ts";

export const CONNECTION_GROUPINGS = ["usename", "client_addr", "datname", "application_name", "state"] as const;
export type ConnectionGrouping = (typeof CONNECTION_GROUPINGS)[number];

export interface ConnectionGroup {
  key: string | null;
  /** Connections in the latest sample of the window. */
  current: number;
  max: number;
  avg: number;
  time_series: Array<{ time: string; value: number | null }>;
}

/** Only client backends are connections; background workers and WAL senders are not. */
const CLIENTS = "backend_type = 'client backend'";

export async function connectionGroups(
  db: Queryable,
  q: { access: Authority; connectionId: number; groupBy: ConnectionGrouping; window: Window; buckets?: number },
): Promise<{ group_by: ConnectionGrouping; groups: ConnectionGroup[] }> {
  const intervalSeconds = (await readableIntervals(db, "pg_stat_activity", [q.connectionId], q.access)).get(q.connectionId)!;
  const buckets = layoutBuckets(q.window.start, q.window.end, intervalSeconds, q.buckets);
  const range = [q.connectionId, new Date(q.window.start - borrowLimitMs(buckets)).toISOString(), new Date(q.window.end).toISOString()];
  // One scan: other backends' rows still mark the sample as taken (key null, count 0 unless clients share it).
  const counts = await db.query<{ t: Date; key: string | null; n: number }>(
    `SELECT collected_at AS t, CASE WHEN ${CLIENTS} THEN ${quoteIdent(q.groupBy)}::text END AS key, count(*) FILTER (WHERE ${CLIENTS})::int AS n
       FROM ${samplesSql(findProbe("pg_stat_activity")!, "$2", "$3", ["backend_type", q.groupBy])} s WHERE connection_id = $1 GROUP BY 1, 2 ORDER BY 1`,
    range,
  );
  const samples = [...new Set(counts.map((c) => c.t.getTime()))];
  const perGroup = new Map<string | null, Map<number, number>>();
  for (const c of counts) {
    if (c.n === 0) continue;
    if (!perGroup.has(c.key)) perGroup.set(c.key, new Map());
    perGroup.get(c.key)!.set(c.t.getTime(), c.n);
  }
  const inWindow = samples.filter((t) => t >= q.window.start);
  const prior = samples.filter((t) => t < q.window.start).pop();
  const judged = judgedIntervalMs(
    intervalSeconds,
    inWindow.slice(1).map((t, i) => t - inWindow[i]),
  );
  const times = pointTimes(buckets);

  const groups = [...perGroup].flatMap(([key, byTime]): ConnectionGroup[] => {
    const values = inWindow.map((t) => byTime.get(t) ?? 0);
    if (!values.some((v) => v > 0)) return []; // seen only in the borrowed sample before the window
    const series = seriesFromLevels({
      inWindow: inWindow.map((t, i) => levelPoint(t, [values[i]])),
      prior: prior === undefined ? undefined : levelPoint(prior, [byTime.get(prior) ?? 0]),
      buckets,
      judgedInterval: judged,
      aggregation: "avg",
    });
    return [
      {
        key,
        current: values[values.length - 1],
        max: Math.max(...values),
        avg: round(values.reduce((s, v) => s + v, 0) / values.length, 2),
        time_series: times.map((time, k) => ({ time, value: series[k] === null ? null : round(series[k]!, 2) })),
      },
    ];
  });
  groups.sort((a, b) => b.current - a.current || b.max - a.max || String(a.key).localeCompare(String(b.key)));
  return { group_by: q.groupBy, groups };
}
