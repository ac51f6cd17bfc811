/**
 * The performance summary of one or more connections over a window: transaction id age, the cache hit ratio,
 * transaction rates and checkpoint time. Every rate and ratio comes from the metrics pipeline's reset- and
 * gap-aware changes; the cache hit ratio of a bucket is that bucket's hits over its block requests.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { latestSamples } from "../samples/read-latest-sample.ts";
import type { MetricsContextCache } from "./metrics-context.ts";
import { summaryBuckets } from "../metrics/buckets.ts";
import { type MetricSeries, runMetricsQuery } from "./query.ts";
import { percent, round, seriesValues } from "../metrics/summary-values.ts";
import type { Window } from "../metrics/window.ts";

/** Transaction ids are 32-bit; wraparound protection stops the server at 2^31. */
const XID_LIMIT = 2_147_483_647;

export interface CacheHitRatio {
  current: number | null;
  time_series: Array<{ time: string; value: number }>;
}

interface Activity {
  time: string;
  hit: number;
  read: number;
}

interface Transactions {
  time: string;
  commits: number;
  rollbacks: number;
  commits_per_sec: number;
}

export interface ConnectionSummary {
  connection_id: number;
  connection_name: string;
  xid_age: Array<{ database_name: string; age: number; percent: number }>;
  cache_hit_ratio: CacheHitRatio;
  transactions: {
    commits_per_sec: number | null;
    rollback_percent: number | null;
    time_series: Array<{ time: string; commits_per_sec: number; rollback_percent: number | null }>;
  };
  checkpoints: { time_series: Array<{ time: string; write_time_ms: number; sync_time_ms: number }> };
}

export interface PerformanceSummary {
  time_range: string;
  time_start: string;
  time_end: string;
  bucket_seconds: number;
  connections: ConnectionSummary[];
  aggregate?: { cache_hit_ratio: number | null; commits_per_sec: number; rollback_percent: number | null };
}

/** Per bucket with block requests: the share served from shared buffers. */
export function cacheHitRatio(activity: readonly Activity[]): CacheHitRatio {
  const time_series = activity.flatMap((a) => {
    const value = percent(a.hit, a.hit + a.read);
    return value === null ? [] : [{ time: a.time, value }];
  });
  return { current: time_series[time_series.length - 1]?.value ?? null, time_series };
}

/** Hits and reads of each bucket that has both changes. */
export function blockActivity(series: readonly MetricSeries[], connectionId: number, hitName = "blks_hit_delta", readName = "blks_read_delta"): Activity[] {
  const of = seriesValues(series, connectionId);
  const hits = of(hitName);
  const reads = of(readName);
  const times = series[0].data.map((p) => p.time);
  return times.flatMap((time, k) => (hits[k] === null || reads[k] === null ? [] : [{ time, hit: hits[k]!, read: reads[k]! }]));
}

/** Per connection, its databases' transaction id ages in its latest pg_database sample, oldest first. */
async function xidAges(db: Queryable, connectionIds: readonly number[]): Promise<Map<number, ConnectionSummary["xid_age"]>> {
  const samples = await latestSamples<{ datname: string; age_datfrozenxid: number }>(
    db,
    "pg_database",
    connectionIds,
    "datistemplate IS NOT TRUE AND age_datfrozenxid IS NOT NULL",
    ["datname", "age_datfrozenxid", "datistemplate"],
  );
  const ages = new Map<number, ConnectionSummary["xid_age"]>();
  for (const [id, { rows }] of samples) {
    const perDatabase = rows.map((r) => ({
      database_name: r.datname,
      age: Number(r.age_datfrozenxid),
      percent: round((100 * Number(r.age_datfrozenxid)) / XID_LIMIT, 2),
    }));
    ages.set(
      id,
      perDatabase.sort((a, b) => b.age - a.age || a.database_name.localeCompare(b.database_name)),
    );
  }
  return ages;
}

export async function performanceSummary(
  db: Queryable,
  q: { access: Authority; connectionIds: readonly number[]; window: Window; timeRange: string; contextCache?: MetricsContextCache },
): Promise<PerformanceSummary> {
  const common = {
    access: q.access,
    contextCache: q.contextCache,
    connectionIds: q.connectionIds,
    window: q.window,
    layout: summaryBuckets(q.window.start, q.window.end),
  };
  // The first query checks that the caller may read every connection; the other reads then go out together.
  const database = await runMetricsQuery(db, {
    ...common,
    probeName: "pg_stat_database",
    metrics: "blks_hit_delta,blks_read_delta,xact_commit_delta,xact_rollback_delta,xact_commit_per_sec",
  });
  const [checkpointer, named, xids] = await Promise.all([
    runMetricsQuery(db, { ...common, probeName: "pg_stat_checkpointer", metrics: "write_time_delta,sync_time_delta" }),
    db.query<{ id: number; name: string }>("SELECT id, name FROM connections WHERE id = ANY($1::int[])", [q.connectionIds]),
    xidAges(db, q.connectionIds),
  ]);
  const names = new Map(named.map((r) => [r.id, r.name]));
  const times = database.series[0].data.map((p) => p.time);

  const latestActivity: Activity[] = [];
  const latestTransactions: Transactions[] = [];
  const connections: ConnectionSummary[] = [];
  for (const id of q.connectionIds) {
    const activity = blockActivity(database.series, id);
    const of = seriesValues(database.series, id);
    const [commits, rollbacks, rate] = [of("xact_commit_delta"), of("xact_rollback_delta"), of("xact_commit_per_sec")];
    const transactions: Transactions[] = times.flatMap((time, k) =>
      rate[k] === null ? [] : [{ time, commits: commits[k] ?? 0, rollbacks: rollbacks[k] ?? 0, commits_per_sec: rate[k]! }],
    );
    const cp = seriesValues(checkpointer.series, id);
    const [write, sync] = [cp("write_time_delta"), cp("sync_time_delta")];
    const lastTx = transactions[transactions.length - 1];
    if (activity.length) latestActivity.push(activity[activity.length - 1]);
    if (lastTx) latestTransactions.push(lastTx);
    connections.push({
      connection_id: id,
      connection_name: names.get(id) ?? "",
      xid_age: xids.get(id)!,
      cache_hit_ratio: cacheHitRatio(activity),
      transactions: {
        commits_per_sec: lastTx ? round(lastTx.commits_per_sec, 2) : null,
        rollback_percent: lastTx ? percent(lastTx.rollbacks, lastTx.commits + lastTx.rollbacks) : null,
        time_series: transactions.map((t) => ({
          time: t.time,
          commits_per_sec: round(t.commits_per_sec, 2),
          rollback_percent: percent(t.rollbacks, t.commits + t.rollbacks),
        })),
      },
      checkpoints: {
        time_series: times.flatMap((time, k) =>
          write[k] === null && sync[k] === null ? [] : [{ time, write_time_ms: round(write[k] ?? 0, 1), sync_time_ms: round(sync[k] ?? 0, 1) }],
        ),
      },
    });
  }

  const summary: PerformanceSummary = {
    time_range: q.timeRange,
    time_start: new Date(q.window.start).toISOString(),
    time_end: new Date(q.window.end).toISOString(),
    bucket_seconds: round(database.buckets.width / 1000, 3),
    connections,
  };
  if (q.connectionIds.length > 1) {
    // The estate now: each connection's latest bucket, weighted by its own activity.
    const sum = <T>(items: readonly T[], f: (x: T) => number) => items.reduce((s, x) => s + f(x), 0);
    const hits = sum(latestActivity, (a) => a.hit);
    const commits = sum(latestTransactions, (t) => t.commits);
    summary.aggregate = {
      cache_hit_ratio: percent(hits, hits + sum(latestActivity, (a) => a.read)),
      commits_per_sec: round(
        sum(latestTransactions, (t) => t.commits_per_sec),
        2,
      ),
      rollback_percent: percent(
        sum(latestTransactions, (t) => t.rollbacks),
        commits + sum(latestTransactions, (t) => t.rollbacks),
      ),
    };
  }
  return summary;
}
