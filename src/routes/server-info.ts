import { createRoute, z } from "@hono/zod-openapi";
import { readableConnection } from "../datastore/connections.ts";
import { latestSample } from "../datastore/latest-sample.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { PathId, json } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { ScalarOrNull, errorResponses } from "../http/schemas.ts";

/** Settings worth a glance when sizing up a server. */
export const KEY_SETTINGS = [
  "shared_buffers", "work_mem", "maintenance_work_mem", "effective_cache_size", "max_connections", "max_worker_processes",
  "max_parallel_workers", "wal_level", "max_wal_size", "min_wal_size", "checkpoint_timeout", "checkpoint_completion_target",
  "random_page_cost", "effective_io_concurrency", "autovacuum", "archive_mode", "log_min_duration_statement", "shared_preload_libraries",
];

/** One stored figure of a system probe. */
const Figure = ScalarOrNull;
const Section = <T extends z.ZodType>(shape: T) => z.object({ collected_at: z.string().nullable().openapi({ description: "When these figures were collected; null when never" }), data: shape });

const ServerInfo = z
  .object({
    connection_id: z.number().int(),
    name: z.string(),
    postgresql: Section(z.object({ version: z.string().nullable(), cluster_name: z.string().nullable(), data_directory: z.string().nullable(), role: z.enum(["primary", "standby"]).nullable(), standby_count: z.number().int() })),
    uptime: Section(z.object({ started_at: z.string().nullable(), uptime_seconds: z.number().nullable() })),
    databases: Section(z.array(z.object({ name: z.string(), size_bytes: z.number().nullable(), xid_age: z.number().nullable() }))),
    extensions: Section(z.array(z.object({ database_name: z.string(), name: z.string(), version: z.string().nullable() }))),
    key_settings: Section(z.array(z.object({ name: z.string(), setting: z.string().nullable(), unit: z.string().nullable() }))),
    system: z.object({
      memory: Section(z.record(z.string(), Figure).nullable()),
      cpu: Section(z.record(z.string(), Figure).nullable()),
      load: Section(z.record(z.string(), Figure).nullable()),
      disks: Section(z.array(z.record(z.string(), Figure))),
    }),
  })
  .openapi("ServerInfo");

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/server-info/{connection_id}",
    tags: ["Server information"],
    summary: "What the datastore knows about a server, each part with the time it was collected",
    request: { params: z.object({ connection_id: PathId.openapi({ param: { name: "connection_id", in: "path" } }) }) },
    responses: { 200: json(ServerInfo, "Server information"), ...errorResponses(400, 401, 404) },
  }),
);

type Row = Record<string, unknown>;
const figure = (v: unknown): z.infer<typeof Figure> => (v instanceof Date ? v.toISOString() : v === undefined ? null : (v as z.infer<typeof Figure>));
const strip = (row: Row | undefined) =>
  row ? Object.fromEntries(Object.entries(row).filter(([k]) => k !== "connection_id" && k !== "collected_at").map(([k, v]) => [k, figure(v)])) : null;
const numeric = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export const serverInfoRoutes = newRouter().openapi(route, async (c) => {
  const { connection_id: id } = c.req.valid("param");
  const db = c.get("db");
  const conn = await readableConnection(db, id, await authority(c));
  const [settings, replication, activity, databases, extensions, memory, cpu, load, disks] = await Promise.all([
    latestSample<Row>(db, "pg_settings", id),
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
  const started = activity.rows
    .filter((r) => r.backend_type === "checkpointer" && r.backend_start)
    .map((r) => r.backend_start as Date)[0];
  return c.json(
    {
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
        data: { started_at: started?.toISOString() ?? null, uptime_seconds: started && activity.collected_at ? Math.round((Date.parse(activity.collected_at) - started.getTime()) / 1000) : null },
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
        data: extensions.rows.map((r) => ({ database_name: r.database_name as string, name: r.extname as string, version: (r.extversion as string) ?? null })),
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
    },
    200,
  );
});
