/** The dashboard endpoints: performance summary, database summaries, connection groups. */
import { z } from "@hono/zod-openapi";
import { InputError } from "../errors.ts";
import { authority } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { CONNECTION_GROUPINGS, connectionGroups } from "../queries/connection-groups.ts";
import { databaseSummaries } from "../queries/database-summaries.ts";
import { performanceSummary } from "../queries/performance-summary.ts";
import { PRESETS, resolveWindow } from "../metrics/window.ts";
import { connectionParams, metricsGet, requestedConnections, windowParams } from "./metrics.ts";
import { readDb } from "../http/read-db.ts";

const Time = z.string().openapi({ format: "date-time" });
const Ratio = z.number().nullable().openapi({ description: "Percentage, 2 decimals; null when there was nothing to measure" });
const CacheHitRatio = z
  .object({
    current: Ratio.openapi({ description: "The latest bucket's ratio" }),
    time_series: z.array(z.object({ time: Time, value: z.number() })),
  })
  .openapi("CacheHitRatio", {
    description:
      "Per bucket: blocks found in shared buffers / blocks requested, of the changes within that bucket (reset- and gap-aware), as a percentage. " +
      "Unlike a ratio of lifetime counters it shows a cache going cold at once. Buckets without block requests are left out.",
  });

const ConnectionSummary = z
  .object({
    connection_id: z.number().int(),
    connection_name: z.string(),
    xid_age: z.array(z.object({ database_name: z.string(), age: z.number().int(), percent: z.number().openapi({ description: "age / 2^31 x 100" }) })),
    cache_hit_ratio: CacheHitRatio,
    transactions: z.object({
      commits_per_sec: z.number().nullable().openapi({ description: "The latest bucket's rate" }),
      rollback_percent: Ratio,
      time_series: z.array(z.object({ time: Time, commits_per_sec: z.number(), rollback_percent: Ratio })),
    }),
    checkpoints: z.object({ time_series: z.array(z.object({ time: Time, write_time_ms: z.number(), sync_time_ms: z.number() })) }),
  })
  .openapi("ConnectionPerformance");

const performance = metricsGet({
  path: "/api/v1/metrics/performance-summary",
  summary: "Performance summary of one or more connections",
  description:
    "Per connection: transaction id age per database (latest sample), the cache hit ratio, commits per second and rollback share, checkpoint " +
    "write and sync time, each per bucket of one sixtieth of the window (at least 10 s); buckets without data are left out. All rates come from " +
    "reset- and gap-aware changes. `aggregate` (several connections) combines each connection's latest bucket.",
  query: z.object({ ...connectionParams, ...windowParams("1h") }),
  ok: z.object({
    time_range: z.string(),
    time_start: Time,
    time_end: Time,
    bucket_seconds: z.number(),
    connections: z.array(ConnectionSummary),
    aggregate: z.object({ cache_hit_ratio: Ratio, commits_per_sec: z.number(), rollback_percent: Ratio }).optional(),
  }),
  okDescription: "The summary",
});

const databases = metricsGet({
  path: "/api/v1/metrics/database-summaries",
  summary: "The databases of one connection: size, cache hit ratio, commit rate, dead tuples, backends",
  description:
    "Largest database first. Sizes from the latest pg_database sample, backends from the latest pg_stat_database sample, the dead tuple ratio " +
    "from the latest table sample in the window; the cache hit ratio per bucket (one sixtieth of the window) and the commit rate of the latest " +
    "bucket from reset- and gap-aware changes. Presets only (SPEC).",
  query: z.object({
    ...connectionParams,
    time_range: z
      .string()
      .optional()
      .openapi({ description: `One of ${Object.keys(PRESETS).join(", ")} (default 24h)` }),
  }),
  ok: z.object({
    databases: z.array(
      z.object({
        database_name: z.string(),
        size_bytes: z.number().nullable(),
        size_pretty: z.string().nullable().openapi({ example: "1.5 GB" }),
        cache_hit_ratio: CacheHitRatio,
        transaction_rate: z.number().nullable().openapi({ description: "Commits per second in the latest bucket" }),
        dead_tuple_ratio: Ratio,
        active_connections: z.number().int().nullable(),
      }),
    ),
  }),
  okDescription: "The databases",
});

const groups = metricsGet({
  path: "/api/v1/metrics/connection-groups",
  summary: "Client connections of one server counted per user, client address, database, application or state",
  description:
    "From the pg_stat_activity samples (client backends only). Per group: the count in the latest sample, the maximum and the average over the " +
    "window's samples, and a series with one point per bucket (as the metrics query lays them out) holding the average count, the last value " +
    "repeated across short gaps. Largest current count first.",
  query: z.object({
    ...connectionParams,
    group_by: z.enum(CONNECTION_GROUPINGS, { error: `required: one of ${CONNECTION_GROUPINGS.join(", ")}` }),
    ...windowParams("1h"),
    buckets: z.coerce
      .number()
      .int()
      .optional()
      .openapi({ description: "Requested bucket count (default 150), clamped to 1..500 and to the collection interval" }),
  }),
  ok: z.object({
    group_by: z.enum(CONNECTION_GROUPINGS),
    groups: z.array(
      z.object({
        key: z.string().nullable(),
        current: z.number().int(),
        max: z.number().int(),
        avg: z.number(),
        time_series: z.array(z.object({ time: Time, value: z.number().nullable() })),
      }),
    ),
  }),
  okDescription: "The groups",
});

export const metricsSummaryRoutes = newRouter()
  .openapi(performance, async (c) => {
    const q = c.req.valid("query");
    const summary = await performanceSummary(readDb(c), {
      access: await authority(c),
      contextCache: c.get("metricsContexts"),
      connectionIds: requestedConnections(q),
      window: resolveWindow(q, Date.now()),
      timeRange: q.time_range ?? "1h",
    });
    return c.json(summary, 200);
  })
  .openapi(databases, async (c) => {
    const q = c.req.valid("query");
    const range = q.time_range ?? "24h";
    if (!(range in PRESETS))
      throw new InputError(
        `\`time_range\` must be one of ${Object.keys(PRESETS).join(", ")} (database-summaries takes presets only); got ${JSON.stringify(range)}`,
      );
    const rows = await databaseSummaries(readDb(c), {
      access: await authority(c),
      connectionId: requestedConnections(q, true)[0],
      window: resolveWindow({ time_range: range }, Date.now()),
    });
    return c.json({ databases: rows }, 200);
  })
  .openapi(groups, async (c) => {
    const q = c.req.valid("query");
    const result = await connectionGroups(readDb(c), {
      access: await authority(c),
      connectionId: requestedConnections(q, true)[0],
      groupBy: q.group_by,
      window: resolveWindow(q, Date.now()),
      buckets: q.buckets,
    });
    return c.json(result, 200);
  });
