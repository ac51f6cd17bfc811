/**
 * One connection's databases at a glance: size, the per-bucket cache hit ratio, the commit rate, the dead
 * tuple ratio and the backends, largest database first. Rates and ratios are computed per database by the
 * pipeline's change rules in the datastore (reset- and gap-aware); sizes and backends come from the latest samples.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { bucketValues, fetchGroupedChanges } from "../samples/read-grouped-changes.ts";
import { latestSample } from "../samples/read-latest-sample.ts";
import { readableIntervals } from "./metrics-context.ts";
import { findProbe } from "../probes/index.ts";
import { pointTimes, summaryBuckets } from "../metrics/buckets.ts";
import { type CacheHitRatio, cacheHitRatio } from "./performance-summary.ts";
import { percent, prettySize, round } from "../metrics/summary-values.ts";
import type { Window } from "../metrics/window.ts";
import { latestSampleTimesSql, samplesSql } from "../probes/history-ddl.ts";

export interface DatabaseSummary {
  database_name: string;
  size_bytes: number | null;
  size_pretty: string | null;
  cache_hit_ratio: CacheHitRatio;
  /** Commits per second in the latest bucket with a valid change. */
  transaction_rate: number | null;
  /** Dead tuples as a percentage of all tuples in the latest table sample of the window. */
  dead_tuple_ratio: number | null;
  active_connections: number | null;
}

async function deadTupleRatios(db: Queryable, connectionId: number, window: Window): Promise<Map<string, number | null>> {
  const probe = findProbe("pg_stat_all_tables")!;
  // Each database's latest sample in the window, then its tables at that instant.
  const rows = await db.query<{ database_name: string; dead: number | null; live: number | null }>(
    `SELECT l.database_name, sum(t.n_dead_tup) AS dead, sum(t.n_live_tup) AS live
       FROM ${latestSampleTimesSql(probe, "$1", "$2", "$3", ["database_name"])} l
       CROSS JOIN LATERAL ${samplesSql(probe, "l.at", "l.at", ["n_dead_tup", "n_live_tup"])} t
      WHERE t.connection_id = $1 AND t.database_name = l.database_name AND t.collected_at = l.at
      GROUP BY l.database_name`,
    [connectionId, new Date(window.start).toISOString(), new Date(window.end).toISOString()],
  );
  return new Map(rows.map((r) => [r.database_name, percent(Number(r.dead ?? 0), Number(r.dead ?? 0) + Number(r.live ?? 0))]));
}

export async function databaseSummaries(db: Queryable, q: { access: Authority; connectionId: number; window: Window }): Promise<DatabaseSummary[]> {
  const buckets = summaryBuckets(q.window.start, q.window.end);
  const intervalSeconds = (await readableIntervals(db, "pg_stat_database", [q.connectionId], q.access)).get(q.connectionId)!;
  const changes = await fetchGroupedChanges(db, {
    probe: findProbe("pg_stat_database")!,
    connectionId: q.connectionId,
    columns: ["blks_hit", "blks_read", "xact_commit"],
    groupBy: ["database_name"],
    buckets,
    intervalSeconds,
    rates: true,
  });
  const series = new Map(
    changes.map((c) => [c.group[0], [bucketValues(c.delta[0], buckets), bucketValues(c.delta[1], buckets), bucketValues(c.rate[2], buckets)]]),
  );
  const sizes = (await latestSample<{ datname: string; database_size_bytes: number | null }>(db, "pg_database", q.connectionId, "datistemplate IS NOT TRUE"))
    .rows;
  const backends = (await latestSample<{ database_name: string; numbackends: number | null }>(db, "pg_stat_database", q.connectionId)).rows;
  const dead = await deadTupleRatios(db, q.connectionId, q.window);

  const names = new Set([...series.keys(), ...sizes.map((r) => r.datname), ...backends.map((r) => r.database_name), ...dead.keys()]);
  const times = pointTimes(buckets);
  const summaries = [...names].map((name): DatabaseSummary => {
    const [hits, reads, rates] = series.get(name) ?? [[], [], []];
    const activity = hits.flatMap((hit, k) => (hit === null || reads[k] === null ? [] : [{ time: times[k], hit, read: reads[k]! }]));
    const rate = rates.filter((v) => v !== null).pop();
    const size = sizes.find((r) => r.datname === name)?.database_size_bytes;
    const numbackends = backends.find((r) => r.database_name === name)?.numbackends;
    return {
      database_name: name,
      size_bytes: size === null || size === undefined ? null : Number(size),
      size_pretty: size === null || size === undefined ? null : prettySize(Number(size)),
      cache_hit_ratio: cacheHitRatio(activity),
      transaction_rate: rate === undefined ? null : round(rate, 2),
      dead_tuple_ratio: dead.get(name) ?? null,
      active_connections: numbackends === null || numbackends === undefined ? null : Number(numbackends),
    };
  });
  return summaries.sort((a, b) => (b.size_bytes ?? -1) - (a.size_bytes ?? -1) || a.database_name.localeCompare(b.database_name));
}
