/**
 * What the datastore knows about a server, assembled from the latest samples of its probes, each part with
 * the time it was collected.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { quoteLiteral } from "../probes/ddl.ts";
import { latestSample } from "../samples/read-latest-sample.ts";

/** Settings worth a glance when sizing up a server. */
export const KEY_SETTINGS = [
  "shared_buffers",
  "work_mem",
  "maintenance_work_mem",
  "effective_cache_size",
  "max_connections",
  "max_worker_processes",
  "max_parallel_workers",
  "wal_level",
  "max_wal_size",
  "min_wal_size",
  "checkpoint_timeout",
  "checkpoint_completion_target",
  "random_page_cost",
  "effective_io_concurrency",
  "autovacuum",
  "archive_mode",
  "log_min_duration_statement",
  "shared_preload_libraries",
];

/** The settings the server's facts come from besides KEY_SETTINGS. */
const FACT_SETTINGS = ["server_version", "cluster_name", "data_directory", "in_hot_standby"];
/** Only the settings shown are read: a sample holds every setting (about 350) with its description. */
const SETTINGS_SHOWN = `name IN (${[...FACT_SETTINGS, ...KEY_SETTINGS].map(quoteLiteral).join(", ")})`;

type Row = Record<string, unknown>;
const figure = (v: unknown): string | number | boolean | null =>
  v instanceof Date ? v.toISOString() : v === undefined ? null : (v as string | number | boolean | null);
const strip = (row: Row | undefined) =>
  row
    ? Object.fromEntries(
        Object.entries(row)
          .filter(([k]) => k !== "connection_id" && k !== "collected_at")
          .map(([k, v]) => [k, figure(v)]),
      )
    : null;
const numeric = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export interface InstalledExtension {
  name: string;
  version: string | null;
  /** The databases it is installed in at this version, sorted. */
  databases: string[];
}

/** pg_extension has a row per database: each extension once per version, with the databases that have it. */
function extensionsOnce(rows: Row[]): InstalledExtension[] {
  const byKey = new Map<string, InstalledExtension>();
  for (const r of rows) {
    const name = r.extname as string;
    const version = (r.extversion as string) ?? null;
    const key = JSON.stringify([name, version]);
    const entry = byKey.get(key) ?? { name, version, databases: [] };
    entry.databases.push(r.database_name as string);
    byKey.set(key, entry);
  }
  for (const e of byKey.values()) e.databases.sort();
  return [...byKey.values()].sort((a, b) => a.name.localeCompare(b.name) || String(a.version).localeCompare(String(b.version)));
}

export async function serverInfo(db: Queryable, conn: ConnectionRow) {
  const id = conn.id;
  const [settings, replication, activity, databases, extensions, memory, cpu, load, disks] = await Promise.all([
    latestSample<Row>(db, "pg_settings", id, SETTINGS_SHOWN),
    latestSample<Row>(db, "pg_stat_replication", id),
    latestSample<Row>(db, "pg_stat_activity", id),
    latestSample<Row>(db, "pg_database", id),
    latestSample<Row>(db, "pg_extension", id),
    latestSample<Row>(db, "pg_sys_memory_info", id),
    latestSample<Row>(db, "pg_sys_cpu_info", id),
    latestSample<Row>(db, "pg_sys_load_avg_info", id),
    latestSample<Row>(db, "pg_sys_disk_info", id),
  ]);
  const setting = (name: string) => (settings.rows.find((r) => r.name === name)?.setting as string | undefined) ?? null;
  // The checkpointer starts with the server: its backend_start is the server's start time.
  const started = activity.rows.filter((r) => r.backend_type === "checkpointer" && r.backend_start).map((r) => r.backend_start as Date)[0];
  return {
    connection_id: conn.id,
    name: conn.name,
    postgresql: {
      collected_at: settings.collected_at,
      data: {
        version: setting("server_version"),
        cluster_name: setting("cluster_name"),
        data_directory: setting("data_directory"),
        role: settings.collected_at ? (setting("in_hot_standby") === "on" ? ("standby" as const) : ("primary" as const)) : null,
        standby_count: replication.rows.filter((r) => r.role === "primary").length,
      },
    },
    uptime: {
      collected_at: activity.collected_at,
      data: {
        started_at: started?.toISOString() ?? null,
        uptime_seconds: started && activity.collected_at ? Math.round((Date.parse(activity.collected_at) - started.getTime()) / 1000) : null,
      },
    },
    databases: {
      collected_at: databases.collected_at,
      data: databases.rows
        .filter((r) => !r.datistemplate)
        .map((r) => ({ name: r.datname as string, size_bytes: numeric(r.database_size_bytes), xid_age: numeric(r.age_datfrozenxid) }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    },
    extensions: {
      collected_at: extensions.collected_at,
      data: extensionsOnce(extensions.rows),
    },
    key_settings: {
      collected_at: settings.collected_at,
      data: KEY_SETTINGS.filter((n) => settings.rows.some((r) => r.name === n)).map((n) => {
        const r = settings.rows.find((s) => s.name === n)!;
        return { name: n, setting: (r.setting as string) ?? null, unit: (r.unit as string) ?? null };
      }),
    },
    system: {
      memory: { collected_at: memory.collected_at, data: strip(memory.rows[0]) },
      cpu: { collected_at: cpu.collected_at, data: strip(cpu.rows[0]) },
      load: { collected_at: load.collected_at, data: strip(load.rows[0]) },
      disks: { collected_at: disks.collected_at, data: disks.rows.map((r) => strip(r)!) },
    },
  };
}

export type ServerInfo = Awaited<ReturnType<typeof serverInfo>>;
