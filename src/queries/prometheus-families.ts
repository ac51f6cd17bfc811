/**
 * What pglens collected, as Prometheus metric families: the latest sample of each probe per connection, one
 * family per numeric column (`<probe>_<column>`, cumulative columns as counters with `_total`), labelled
 * with the connection and the probe's entity keys, each sample at the time pglens took it. Samples older
 * than 3 collection intervals are left out, so a server that stopped answering disappears instead of
 * repeating its last values. pg_stat_activity (one row per session) becomes session counts.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { effectiveProbeConfigs } from "../datastore/probe-configs.ts";
import type { Family, Sample } from "../metrics/exposition.ts";
import { metricName } from "../metrics/exposition.ts";
import { metricColumns } from "../probes/index.ts";
import { CUMULATIVE_KINDS, type ProbeDefinition } from "../probes/types.ts";
import { latestSamples } from "../samples/read-latest-sample.ts";

/** A sample this many collection intervals old is no longer current. */
export const STALE_INTERVALS = 3;
const NUMERIC = new Set(["smallint", "integer", "bigint", "real", "double precision", "numeric", "oid"]);
/** Where postgres_exporter has a different name for the same statistic, its name (docs/prometheus.md lists them). */
const EXPORTER_NAMES: Record<string, string> = { "pg_database.database_size_bytes": "pg_database_size_bytes" };
/** pg_stat_activity_count's labels: the session's database, state, user, application and backend type. */
const ACTIVITY_LABELS = ["datname", "state", "usename", "application_name", "backend_type"] as const;

export interface ExportedConnection {
  id: number;
  name: string;
}

type Row = Record<string, unknown>;
interface Current {
  connection: ExportedConnection;
  at: number;
  rows: Row[];
}

const text = (v: unknown) => (v === null || v === undefined ? "" : v instanceof Date ? v.toISOString() : String(v));
const base = (c: ExportedConnection) => ({ connection_id: String(c.id), connection: c.name });

/** The numeric columns of a probe, as families; pure. */
export function probeFamilies(probe: ProbeDefinition, current: readonly Current[]): Family[] {
  if (probe.name === "pg_stat_activity") return activityFamilies(current);
  return metricColumns(probe)
    .filter((c) => NUMERIC.has(c.type))
    .map((column) => {
      const samples: Sample[] = [];
      for (const { connection, at, rows } of current)
        for (const row of rows) {
          const raw = row[column.name];
          if (raw === null || raw === undefined) continue;
          const value = Number(raw);
          if (!Number.isFinite(value)) continue;
          const labels: Record<string, string> = base(connection);
          for (const key of probe.keys) labels[metricName(key)] = text(row[key]);
          samples.push({ labels, value, timestampMs: at });
        }
      return {
        name: EXPORTER_NAMES[`${probe.name}.${column.name}`] ?? metricName(`${probe.name}_${column.name}`),
        type: CUMULATIVE_KINDS.has(column.kind) ? ("counter" as const) : ("gauge" as const),
        help: `${column.description} (pglens probe ${probe.name})`,
        samples,
      };
    });
}

/** Sessions by database, state, user, application and backend type, and the oldest open transaction's age. */
function activityFamilies(current: readonly Current[]): Family[] {
  const counts: Sample[] = [];
  const oldest: Sample[] = [];
  for (const { connection, at, rows } of current) {
    const groups = new Map<string, { labels: Record<string, string>; n: number; maxAge: number }>();
    for (const row of rows) {
      const labels: Record<string, string> = { ...base(connection), ...Object.fromEntries(ACTIVITY_LABELS.map((k) => [k, text(row[k])])) };
      const key = JSON.stringify(labels);
      const group = groups.get(key) ?? { labels, n: 0, maxAge: 0 };
      group.n++;
      const started = row.xact_start ? new Date(row.xact_start as string).getTime() : null;
      if (started !== null) group.maxAge = Math.max(group.maxAge, (at - started) / 1000);
      groups.set(key, group);
    }
    for (const g of groups.values()) {
      counts.push({ labels: g.labels, value: g.n, timestampMs: at });
      oldest.push({ labels: g.labels, value: g.maxAge, timestampMs: at });
    }
  }
  return [
    {
      name: "pg_stat_activity_count",
      type: "gauge",
      help: "Sessions by database, state, user, application and backend type (pglens probe pg_stat_activity)",
      samples: counts,
    },
    {
      name: "pg_stat_activity_max_tx_duration",
      type: "gauge",
      help: "Age in seconds of the oldest open transaction among those sessions, 0 when none (pglens probe pg_stat_activity)",
      samples: oldest,
    },
  ];
}

/** The current samples of `probe` for `connections`, stale ones and disabled probes left out. */
export async function currentSamples(
  db: Queryable,
  probe: ProbeDefinition,
  connections: readonly ExportedConnection[],
  configs: Awaited<ReturnType<typeof effectiveProbeConfigs>>,
  now: number,
): Promise<Current[]> {
  const wanted = connections.filter((c) => configs.get(c.id)?.get(probe.name)?.is_enabled !== false);
  if (wanted.length === 0) return [];
  const latest = await latestSamples<Row>(
    db,
    probe.name,
    wanted.map((c) => c.id),
  );
  return wanted.flatMap((connection) => {
    const sample = latest.get(connection.id);
    if (!sample?.collected_at) return [];
    const at = Date.parse(sample.collected_at);
    const interval = configs.get(connection.id)?.get(probe.name)?.collection_interval_seconds ?? probe.defaultIntervalSeconds;
    return now - at > STALE_INTERVALS * interval * 1000 ? [] : [{ connection, at, rows: sample.rows }];
  });
}
