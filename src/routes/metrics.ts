import { INT_MAX, queryIds } from "../http/params.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { InputError } from "../errors.ts";
import { errorResponses } from "../http/schemas.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { AGGREGATIONS } from "../metrics/aggregate.ts";
import { MAX_TOP, runGroupedMetricsQuery } from "../queries/grouped-query.ts";
import { runMetricsQuery } from "../queries/query.ts";
import { TIME_RANGES, resolveWindow } from "../metrics/window.ts";
import { readDb } from "../http/read-db.ts";

const MetricSeries = z
  .object({
    name: z.string().openapi({ example: "xact_commit_per_sec" }),
    metric: z.string().openapi({ example: "xact_commit" }),
    unit: z.enum(["", "/s", "ms", "%", "sessions"]),
    connection_id: z.number().int(),
    entity: z
      .record(z.string(), z.string().nullable())
      .optional()
      .openapi({ description: "With group_by: the key fields of the series' entity group", example: { database_name: "shop" } }),
    data: z.array(z.object({ time: z.string().openapi({ format: "date-time" }), value: z.number().nullable() })),
  })
  .openapi("MetricSeries");

export const optionalText = (description: string) => z.string().optional().openapi({ description });

/** time_range, time_start, time_end as every windowed metrics endpoint takes them (SPEC "Time window rules"). */
export const windowParams = (defaultRange: string) => ({
  time_range: z
    .enum(TIME_RANGES)
    .optional()
    .openapi({ description: `Rolling window ending now, or custom (default ${defaultRange})` }),
  time_start: optionalText("RFC 3339 window start; required with time_range=custom"),
  time_end: optionalText("RFC 3339 window end; required with time_range=custom; a future end is clamped to now"),
});

/** connection_id and/or connection_ids: one or several connections (repeat the parameter or separate ids with commas). */
export const connectionParams = {
  connection_id: queryIds("Monitored connection id; repeat the parameter or separate ids with commas for several").optional(),
  connection_ids: queryIds("Alternative spelling of connection_id").optional(),
};

/** The connections a request names through connection_id and connection_ids. */
export function requestedConnections(q: { connection_id?: string | string[]; connection_ids?: string | string[] }, exactlyOne = false): number[] {
  const given = [q.connection_id ?? [], q.connection_ids ?? []].flat();
  if (given.length === 0)
    throw new InputError("query parameter `connection_id` is required: the monitored connection's id (GET /api/v1/connections lists them)");
  const ids = parseConnectionIds(given);
  if (exactlyOne && ids.length !== 1) throw new InputError(`exactly one \`connection_id\` is required; got ${ids.length}`);
  return ids;
}

const QuerySchema = z.object({
  probe_name: z.string({ error: "required: the probe to query, e.g. pg_stat_database" }).min(1).openapi({ example: "pg_stat_database" }),
  connection_id: queryIds(
    "Monitored connection id; repeat the parameter or separate ids with commas for several",
    "required: one or more connection ids (repeat the parameter or separate ids with commas)",
  ),
  ...windowParams("1h"),
  buckets: z.coerce
    .number()
    .int()
    .optional()
    .openapi({ description: "Requested bucket count (default 150), clamped to 1..500 and to the collection interval" }),
  aggregation: z
    .string()
    .optional()
    .openapi({
      description: `How a bucket combines its values: ${AGGREGATIONS.join(", ")} (any letter case; default avg); not applied to _delta`,
      example: "avg",
    }),
  metrics: optionalText(
    "Comma-separated raw columns and derived names (<column>_per_sec, _delta, _pct, _sessions, dead_tuple_ratio); default all raw metric columns",
  ),
  database_name: optionalText("Only rows of this database"),
  schema_name: optionalText("Only rows of this schema (table and index probes)"),
  table_name: optionalText("Only rows of this table (table and index probes)"),
  group_by: optionalText("Comma-separated key columns (e.g. database_name; schema_name,table_name): one series per entity group instead of their sum"),
  top: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_TOP)
    .optional()
    .openapi({ description: `With group_by: only the ${"`top`"} groups with the largest total of the first metric over the window (1..${MAX_TOP})` }),
});

/**
 * A GET of the metrics area: any user; 400 for bad input (a query parameter the endpoint does not take too, as
 * on every route), 403/404 for connections, 503 without a datastore.
 */
export function metricsGet<Q extends z.ZodObject, R extends z.ZodType>(spec: {
  path: string;
  summary: string;
  description: string;
  query: Q;
  ok: R;
  okDescription: string;
}) {
  return guarded(
    USER,
    createRoute({
      method: "get",
      path: spec.path,
      tags: ["Metrics"],
      summary: spec.summary,
      description: spec.description,
      request: { query: spec.query },
      responses: { 200: { description: spec.okDescription, content: { "application/json": { schema: spec.ok } } }, ...errorResponses(400, 401, 403, 404, 503) },
    }),
  );
}

const route = metricsGet({
  path: "/api/v1/metrics/query",
  summary: "Time series of raw and derived metrics of a probe",
  description:
    "One series per requested metric per connection (metrics in request order, then connections), each with one point per bucket " +
    "plus one at the window end. Derived metrics are computed per entity between consecutive samples, aware of statistics resets and collection gaps.",
  query: QuerySchema,
  ok: z.array(MetricSeries),
  okDescription: "The series",
});

/** `connection_id=1&connection_id=2` or `connection_id=1,2`; each a positive integer, duplicates dropped. */
export function parseConnectionIds(value: string | string[]): number[] {
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(",")).map((s) => s.trim());
  const ids = parts.map((p) => {
    if (!/^\d{1,10}$/.test(p) || Number(p) <= 0 || Number(p) > INT_MAX)
      throw new InputError(`query parameter \`connection_id\`: ${JSON.stringify(p)} is not a connection id (a positive integer up to ${INT_MAX})`);
    return Number(p);
  });
  return [...new Set(ids)];
}

export const metricsRoutes = newRouter().openapi(route, async (c) => {
  const q = c.req.valid("query");
  if (q.top !== undefined && !q.group_by) throw new InputError("`top` ranks entity groups: give `group_by` too");
  const query = {
    access: await authority(c),
    contextCache: c.get("metricsContexts"),
    probeName: q.probe_name,
    connectionIds: parseConnectionIds(q.connection_id),
    window: resolveWindow(q, Date.now()),
    buckets: q.buckets,
    aggregation: q.aggregation,
    metrics: q.metrics,
    filters: { database_name: q.database_name, schema_name: q.schema_name, table_name: q.table_name },
  };
  if (q.group_by !== undefined) return c.json(await runGroupedMetricsQuery(readDb(c), { ...query, groupBy: q.group_by, top: q.top }), 200);
  return c.json((await runMetricsQuery(readDb(c), query)).series, 200);
});
