/** Statement statistics from pg_stat_statements samples, and the latest snapshot of any probe. */
import { queryFlag, queryInteger } from "../http/params.ts";
import { z } from "@hono/zod-openapi";
import { InputError } from "../errors.ts";
import { authority } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { ScalarOrNull } from "../http/schemas.ts";
import { LATEST_DEFAULT_LIMIT, LATEST_MAX_LIMIT, latestSnapshot } from "../queries/latest-snapshot.ts";
import { queryStats } from "../queries/query-stats.ts";
import { TOP_QUERY_ORDERS, type TopQueryOrder, parseQueryid, topQueries } from "../queries/top-queries.ts";
import { resolveWindow } from "../metrics/window.ts";
import { connectionParams, metricsGet, optionalText, requestedConnections, windowParams } from "./metrics.ts";
import { readDb } from "../http/read-db.ts";

const Time = z.string().openapi({ format: "date-time" });
const QueryId = z.string().openapi({ description: "pg_stat_statements queryid, a signed 64-bit integer as text (exact)", example: "-3815425731294584384" });

const parseOrder = (value: string | undefined): "asc" | "desc" => {
  const order = (value ?? "desc").toLowerCase();
  if (order !== "asc" && order !== "desc") throw new InputError(`\`order\` must be asc or desc; got ${JSON.stringify(value)}`);
  return order;
};
const Order = optionalText("asc or desc (any letter case; default desc)");

function parseLimit(value: string | undefined, fallback: number, max: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InputError(`\`limit\` must be an integer from 1 to ${max}; got ${JSON.stringify(value)}`);
  return n;
}

const TopQuery = z
  .object({
    queryid: QueryId,
    database_name: z.string(),
    query: z.string(),
    calls: z.number(),
    total_exec_time: z.number().openapi({ description: "ms" }),
    mean_exec_time: z.number().nullable().openapi({ description: "total_exec_time / calls (ms)" }),
    rows: z.number(),
    shared_blks_hit: z.number(),
    shared_blks_read: z.number(),
  })
  .openapi("TopQuery");

const top = metricsGet({
  path: "/api/v1/metrics/top-queries",
  summary: "The costliest statements of one connection",
  description:
    "One row per statement and database (the users who ran it summed). Without time_range: the extension's lifetime totals in the latest " +
    "pg_stat_statements sample (SPEC). With time_range: each statement's reset- and gap-aware change over the window (statements that did not " +
    "run are left out), so a pg_stat_statements_reset() is a reset, not a negative spike. pglens's own probe statements are left out unless " +
    "exclude_collector=false.",
  query: z.object({
    ...connectionParams,
    limit: queryInteger("1 to 100 (default 10)"),
    order_by: optionalText(`One of ${TOP_QUERY_ORDERS.join(", ")} (default total_exec_time)`),
    order: Order,
    queryid: optionalText("Only this statement"),
    exclude_collector: queryFlag("Leave out pglens's own probe statements (default true)"),
    ...windowParams("none: lifetime totals"),
  }),
  ok: z.array(TopQuery),
  okDescription: "The statements",
});

const stats = metricsGet({
  path: "/api/v1/metrics/query-stats",
  summary: "One statement's statistics over a window",
  description:
    "Totals of the statement's reset- and gap-aware changes over the window (summed over the databases and users it ran under), and per bucket " +
    "its calls per second and mean execution time (Δtotal_exec_time / Δcalls). 404 when the statement was never sampled on the connection.",
  query: z.object({
    ...connectionParams,
    queryid: z.string({ error: "required: the statement's queryid (top-queries lists them)" }),
    ...windowParams("1h"),
    buckets: z.coerce
      .number()
      .int()
      .optional()
      .openapi({ description: "Requested bucket count (default 150), clamped to 1..500 and to the collection interval" }),
  }),
  ok: z.object({
    queryid: QueryId,
    query: z.string(),
    databases: z.array(z.string()),
    time_start: Time,
    time_end: Time,
    totals: z.object({
      calls: z.number(),
      total_exec_time: z.number(),
      mean_exec_time: z.number().nullable(),
      rows: z.number(),
      shared_blks_hit: z.number(),
      shared_blks_read: z.number(),
      shared_blks_written: z.number(),
      temp_blks_read: z.number(),
      temp_blks_written: z.number(),
      wal_records: z.number().nullable().openapi({ description: "null where pg_stat_statements (before 1.8) does not count WAL" }),
      wal_bytes: z.number().nullable(),
    }),
    time_series: z.array(z.object({ time: Time, calls_per_sec: z.number().nullable(), mean_exec_time: z.number().nullable() })),
  }),
  okDescription: "The statement's statistics",
});

const latest = metricsGet({
  path: "/api/v1/metrics/latest",
  summary: "The latest sample of a probe, one row per entity",
  description:
    "Rows of the probe's latest sample on the connection (of the named database with database_name), every stored column typed by the catalogue: " +
    "numbers as numbers, timestamps as RFC 3339, queryid as exact text. total_count counts the rows before the limit.",
  query: z.object({
    ...connectionParams,
    probe_name: z.string({ error: "required: the probe, e.g. pg_stat_all_tables" }).min(1).openapi({ example: "pg_stat_all_tables" }),
    database_name: optionalText("Only this database's rows"),
    exclude_schemas: optionalText("Comma-separated schemas to leave out (probes with a schemaname column; none or empty: keep all)"),
    order_by: optionalText("Any column of the probe, or collected_at (default: its first key column)"),
    order: Order,
    limit: queryInteger(`1 to ${LATEST_MAX_LIMIT} (default ${LATEST_DEFAULT_LIMIT})`),
  }),
  ok: z.object({ collected_at: Time.nullable(), rows: z.array(z.record(z.string(), ScalarOrNull)), total_count: z.number().int() }),
  okDescription: "The rows",
});

export const metricsStatementRoutes = newRouter()
  .openapi(top, async (c) => {
    const q = c.req.valid("query");
    const orderBy = q.order_by ?? "total_exec_time";
    if (!(TOP_QUERY_ORDERS as readonly string[]).includes(orderBy))
      throw new InputError(`\`order_by\` must be one of ${TOP_QUERY_ORDERS.join(", ")}; got ${JSON.stringify(orderBy)}`);
    const rows = await topQueries(readDb(c), {
      access: await authority(c),
      connectionId: requestedConnections(q, true)[0],
      limit: parseLimit(q.limit, 10, 100),
      orderBy: orderBy as TopQueryOrder,
      order: parseOrder(q.order),
      queryid: parseQueryid(q.queryid),
      excludeCollector: q.exclude_collector !== false,
      window: q.time_range === undefined ? undefined : resolveWindow(q, Date.now()),
    });
    return c.json(rows, 200);
  })
  .openapi(stats, async (c) => {
    const q = c.req.valid("query");
    const queryid = parseQueryid(q.queryid);
    if (queryid === undefined) throw new InputError("query parameter `queryid` is required: the statement's queryid (top-queries lists them)");
    const result = await queryStats(readDb(c), {
      access: await authority(c),
      connectionId: requestedConnections(q, true)[0],
      queryid,
      window: resolveWindow(q, Date.now()),
      buckets: q.buckets,
    });
    return c.json(result, 200);
  })
  .openapi(latest, async (c) => {
    const q = c.req.valid("query");
    const schemas = (q.exclude_schemas ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const result = await latestSnapshot(readDb(c), {
      access: await authority(c),
      connectionId: requestedConnections(q, true)[0],
      probeName: q.probe_name,
      databaseName: q.database_name,
      excludeSchemas: schemas.length === 1 && schemas[0].toLowerCase() === "none" ? [] : schemas,
      orderBy: q.order_by,
      order: parseOrder(q.order),
      limit: parseLimit(q.limit, LATEST_DEFAULT_LIMIT, LATEST_MAX_LIMIT),
    });
    return c.json(result, 200);
  });
