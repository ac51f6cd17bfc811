/**
 * Baselines in the datastore: histories read from the samples, baselines refreshed from a 7-day lookback
 * (hourly by default, from the alerter), and the current value of each baseline metric for anomaly checks.
 */
import type { Driver, Queryable } from "../../drivers/types.ts";
import { effectiveProbeConfigs } from "../datastore/probe-configs.ts";
import { fetchSampleRows } from "../samples/read-raw-rows.ts";
import { type MetricRequest, parseMetricName } from "../metrics/metric-names.ts";
import { neededColumns } from "../metrics/metrics-plan.ts";
import { groupSamples } from "../metrics/samples.ts";
import { groupBy } from "../group-by.ts";
import { findProbe, metricColumns } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { type Baseline, type Point, baselinesOf, metricHistory } from "./baselines.ts";

export const LOOKBACK_MS = 7 * 24 * 3600 * 1000;
/** A value older than this many collection intervals is not current. */
const CURRENT_INTERVALS = 3;

/** The metrics pglens keeps baselines of and watches for anomalies. */
export const BASELINE_METRICS: ReadonlyArray<{ probe: string; metrics: readonly string[] }> = [
  {
    probe: "pg_stat_database",
    metrics: [
      "xact_commit_per_sec",
      "xact_rollback_per_sec",
      "blks_read_per_sec",
      "tup_returned_per_sec",
      "tup_inserted_per_sec",
      "tup_updated_per_sec",
      "tup_deleted_per_sec",
      "temp_bytes_per_sec",
      "numbackends",
    ],
  },
  { probe: "pg_stat_wal", metrics: ["wal_bytes_per_sec"] },
];

/** What a baselines request without `metrics` answers: the alerter's metrics of the probe, else its numeric columns. */
export function defaultBaselineMetrics(probe: ProbeDefinition): readonly string[] {
  return BASELINE_METRICS.find((b) => b.probe === probe.name)?.metrics ?? metricColumns(probe).map((c) => c.name);
}

/** `probe.metric`, the name baselines and anomaly alerts use. */
export const baselineName = (probe: string, metric: string) => `${probe}.${metric}`;

export interface History {
  connection_id: number;
  /** '' for server-wide probes (and the whole server when not split by database). */
  database_name: string;
  metric: MetricRequest;
  points: Point[];
}

/**
 * The history of each metric of `probe` per connection over [from, to]; for probes with a database_name key,
 * per database when `byDatabase`, else summed over the server's entities (as the metrics query does).
 */
export async function loadHistories(
  db: Queryable,
  probeName: string,
  metricNames: readonly string[],
  connectionIds: readonly number[],
  from: number,
  to: number,
  byDatabase = true,
  /** The connections' probe settings, when the caller has them already. */
  known?: Awaited<ReturnType<typeof effectiveProbeConfigs>>,
): Promise<History[]> {
  const probe = findProbe(probeName)!;
  const metrics = metricNames.map((m) => parseMetricName(m, probe));
  const rows = await fetchSampleRows(db, { probe, connectionIds, from, to, columns: neededColumns(probe, metrics), filters: {} });
  const configs = known ?? (await effectiveProbeConfigs(db, connectionIds));
  const split = byDatabase && probe.keys.includes("database_name");
  const histories: History[] = [];
  const byConnection = groupBy(rows, (r) => r.connection_id);
  for (const id of connectionIds) {
    const mine = byConnection.get(id) ?? [];
    const databases = split ? [...new Set(mine.map((r) => String(r.database_name)))] : [""];
    const interval = configs.get(id)!.get(probeName)!.collection_interval_seconds;
    for (const database of databases) {
      const samples = groupSamples(probe, split ? mine.filter((r) => r.database_name === database) : mine);
      for (const metric of metrics)
        histories.push({ connection_id: id, database_name: database, metric, points: metricHistory(probe, metric, samples, interval) });
    }
  }
  return histories;
}

/** Recomputes every baseline of the monitored connections from the last 7 days. */
export async function refreshBaselines(db: Driver, now = Date.now()): Promise<number> {
  const ids = (await db.query<{ id: number }>("SELECT id FROM connections WHERE is_monitored ORDER BY id")).map((r) => r.id);
  if (ids.length === 0) return 0;
  const rows: Array<Baseline & { connection_id: number; database_name: string; metric_name: string }> = [];
  for (const { probe, metrics } of BASELINE_METRICS) {
    for (const h of await loadHistories(db, probe, metrics, ids, now - LOOKBACK_MS, now)) {
      for (const b of baselinesOf(h.points))
        rows.push({ ...b, connection_id: h.connection_id, database_name: h.database_name, metric_name: baselineName(probe, h.metric.name) });
    }
  }
  // Upsert, then drop what this refresh did not recompute: instances refreshing at once update the same rows
  // instead of each inserting after the other's delete (which the primary key would refuse).
  await db.transaction(async (tx) => {
    const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
    await tx.query(
      `INSERT INTO metric_baselines (connection_id, database_name, metric_name, period_type, period_value, mean, stddev, min, max, p50, p95, p99, sample_count)
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[], $11::float8[], $12::float8[], $13::int[])
       ON CONFLICT (connection_id, database_name, metric_name, period_type, period_value) DO UPDATE
         SET mean = EXCLUDED.mean, stddev = EXCLUDED.stddev, min = EXCLUDED.min, max = EXCLUDED.max, p50 = EXCLUDED.p50, p95 = EXCLUDED.p95,
             p99 = EXCLUDED.p99, sample_count = EXCLUDED.sample_count, calculated_at = now()`,
      [
        column("connection_id"),
        column("database_name"),
        column("metric_name"),
        column("period_type"),
        column("period_value"),
        column("mean"),
        column("stddev"),
        column("min"),
        column("max"),
        column("p50"),
        column("p95"),
        column("p99"),
        column("sample_count"),
      ],
    );
    await tx.query("DELETE FROM metric_baselines WHERE connection_id = ANY($1::int[]) AND calculated_at < now()", [ids]);
  });
  return rows.length;
}

export type StoredBaseline = Baseline & { connection_id: number; database_name: string; metric_name: string };

export const storedBaselines = (db: Queryable, connectionIds: readonly number[]) =>
  db.query<StoredBaseline>("SELECT * FROM metric_baselines WHERE connection_id = ANY($1::int[])", [connectionIds]);

export interface CurrentValue {
  connection_id: number;
  database_name: string;
  metric_name: string;
  t: number;
  value: number;
}

/** The latest value of each baseline metric (its last sample or last interval, when recent). */
export async function currentValues(db: Queryable, connectionIds: readonly number[], now = Date.now()): Promise<CurrentValue[]> {
  const values: CurrentValue[] = [];
  const configs = connectionIds.length ? await effectiveProbeConfigs(db, connectionIds) : new Map();
  for (const { probe, metrics } of BASELINE_METRICS) {
    const interval = (id: number) => configs.get(id)!.get(probe)!.collection_interval_seconds * 1000;
    const longest = Math.max(0, ...connectionIds.map(interval));
    // Far enough back for the sample before the latest (a rate needs both), but only a recent value counts.
    // The settings read once for every probe (each read is a row per connection and probe: ~0.1 s at 1,000 connections).
    for (const h of await loadHistories(db, probe, metrics, connectionIds, now - 2 * CURRENT_INTERVALS * longest, now, true, configs)) {
      const last = h.points.at(-1);
      if (last && now - last.t <= CURRENT_INTERVALS * interval(h.connection_id))
        values.push({
          connection_id: h.connection_id,
          database_name: h.database_name,
          metric_name: baselineName(probe, h.metric.name),
          t: last.t,
          value: last.value,
        });
    }
  }
  return values;
}
