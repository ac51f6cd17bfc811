/**
 * One statement's statistics over a window: reset- and gap-aware totals of its changes (summed over the
 * databases and users it ran under) and per bucket its calls per second and mean execution time.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { bucketValues, fetchGroupedChanges } from "../samples/read-grouped-changes.ts";
import { readableIntervals } from "./metrics-context.ts";
import { NotFoundError } from "../errors.ts";
import { findProbe } from "../probes/index.ts";
import { layoutBuckets, pointTimes } from "../metrics/buckets.ts";
import type { Window } from "../metrics/window.ts";
import { latestSampleAtSql, samplesSql } from "../probes/history-ddl.ts";

const TOTALLED = [
  "calls",
  "total_exec_time",
  "rows",
  "shared_blks_hit",
  "shared_blks_read",
  "shared_blks_written",
  "temp_blks_read",
  "temp_blks_written",
  "wal_records",
  "wal_bytes",
] as const;
/** Figures the server may not have (pg_stat_statements before 1.8): null rather than 0 when never measured. */
const OPTIONAL = ["wal_records", "wal_bytes"] as const;
type Optional = (typeof OPTIONAL)[number];

export interface QueryStats {
  queryid: string;
  query: string;
  /** Databases it was sampled in during the window. */
  databases: string[];
  time_start: string;
  time_end: string;
  totals: Record<Exclude<(typeof TOTALLED)[number], Optional>, number> & Record<Optional, number | null> & { mean_exec_time: number | null };
  time_series: Array<{ time: string; calls_per_sec: number | null; mean_exec_time: number | null }>;
}

export async function queryStats(
  db: Queryable,
  q: { access: Authority; connectionId: number; queryid: string; window: Window; buckets?: number },
): Promise<QueryStats> {
  const intervalSeconds = (await readableIntervals(db, "pg_stat_statements", [q.connectionId], q.access)).get(q.connectionId)!;
  const probe = findProbe("pg_stat_statements")!;
  const [latest] = await db.query<{ query: string }>(
    `SELECT query FROM ${latestSampleAtSql(probe, "$1", "queryid = $2::bigint", [])} l
       CROSS JOIN LATERAL ${samplesSql(probe, "l.at", "l.at", ["query"])} s
      WHERE connection_id = $1 AND queryid = $2::bigint AND collected_at = l.at LIMIT 1`,
    [q.connectionId, q.queryid],
  );
  if (!latest) throw new NotFoundError(`statement ${q.queryid} was never sampled on connection ${q.connectionId}`);
  const databases = await db.query<{ database_name: string }>(
    `SELECT DISTINCT database_name FROM ${samplesSql(probe, "$3", "$4", [])} s
      WHERE connection_id = $1 AND queryid = $2::bigint AND collected_at >= $3::timestamptz AND collected_at <= $4::timestamptz ORDER BY 1`,
    [q.connectionId, q.queryid, new Date(q.window.start).toISOString(), new Date(q.window.end).toISOString()],
  );

  const buckets = layoutBuckets(q.window.start, q.window.end, intervalSeconds, q.buckets);
  const [changes] = await fetchGroupedChanges(db, {
    probe: findProbe("pg_stat_statements")!,
    connectionId: q.connectionId,
    columns: TOTALLED,
    groupBy: [],
    buckets,
    intervalSeconds,
    filters: { queryid: q.queryid },
    rates: true,
  });
  const delta = TOTALLED.map((_, i) => (changes ? bucketValues(changes.delta[i], buckets) : new Array<number | null>(buckets.n + 1).fill(null)));
  const [calls, time] = delta;
  const rate = changes ? bucketValues(changes.rate[0], buckets) : delta[0];
  const sum = (points: ReadonlyArray<number | null>) => points.reduce<number>((s, v) => s + (v ?? 0), 0);
  const totals = Object.fromEntries(
    TOTALLED.map((c, i) => [c, (OPTIONAL as readonly string[]).includes(c) && delta[i].every((v) => v === null) ? null : sum(delta[i])]),
  ) as QueryStats["totals"];
  totals.mean_exec_time = totals.calls > 0 ? totals.total_exec_time / totals.calls : null;
  return {
    queryid: q.queryid,
    query: latest.query,
    databases: databases.map((d) => d.database_name),
    time_start: new Date(q.window.start).toISOString(),
    time_end: new Date(q.window.end).toISOString(),
    totals,
    time_series: pointTimes(buckets).map((at, k) => ({
      time: at,
      calls_per_sec: rate[k],
      mean_exec_time: calls[k] ? time[k]! / calls[k]! : null,
    })),
  };
}
