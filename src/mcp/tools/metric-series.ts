/** What query_metrics and get_metric_series share: the metrics query's parameters, run, and answered as TSV. */
import { z } from "zod";
import type { Driver } from "../../../drivers/types.ts";
import type { Authority } from "../../auth/rbac.ts";
import { AGGREGATIONS } from "../../metrics/aggregate.ts";
import { MAX_BUCKETS } from "../../metrics/buckets.ts";
import type { Window } from "../../metrics/window.ts";
import { MAX_TOP, runGroupedMetricsQuery } from "../../queries/grouped-query.ts";
import { type MetricSeries, runMetricsQuery } from "../../queries/query.ts";
import { ToolError } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { connectionArgs, namedConnections } from "../vocabulary.ts";

/** The parameters both tools take, under the metrics query's names. */
export const seriesArgs = {
  probe_name: z.string().min(1).max(63).describe("Probe name from list_probes, e.g. pg_stat_database"),
  ...connectionArgs,
  buckets: z
    .number()
    .int()
    .min(1)
    .max(MAX_BUCKETS)
    .optional()
    .describe(`Number of time buckets, 1 to ${MAX_BUCKETS}; default 150; never narrower than the collection interval`),
  database_name: z.string().max(63).optional().describe("Only rows of this database (database-scoped probes and pg_database)"),
  schema_name: z.string().max(63).optional().describe("Only rows of this schema (table and index probes)"),
  table_name: z.string().max(63).optional().describe("Only rows of this table (table and index probes)"),
  group_by: z.string().max(200).optional().describe("Comma-separated key columns (e.g. database_name): one column per metric per entity instead of their sum"),
  top: z
    .number()
    .int()
    .min(1)
    .max(MAX_TOP)
    .optional()
    .describe(`With group_by: only the entities with the largest total of the first metric (1 to ${MAX_TOP})`),
  aggregation: z
    .enum(AGGREGATIONS)
    .optional()
    .describe(
      "How the values in a bucket are combined: avg (default; rates, averages), sum (cumulative counts), max (peaks), min (minimum thresholds), last (point-in-time values)",
    ),
};

type SeriesArgs = z.infer<z.ZodObject<typeof seriesArgs>> & { metrics?: string };

/**
 * The series as TSV: bucket_time plus one column per metric (per connection when several, per entity with
 * group_by), e.g. `xact_commit_per_sec{connection_id=2,database_name=shop}`; empty cells where no value.
 */
export async function seriesTsv(db: Driver, access: Authority, args: SeriesArgs, window: Window): Promise<string> {
  const connectionIds = namedConnections(args);
  if (!connectionIds) throw new ToolError("give connection_id (one server) or connection_ids (several)");
  if (args.top !== undefined && !args.group_by) throw new ToolError("`top` ranks entity groups: give `group_by` too");
  const query = {
    access,
    probeName: args.probe_name,
    connectionIds,
    window,
    buckets: args.buckets,
    aggregation: args.aggregation,
    metrics: args.metrics,
    filters: { database_name: args.database_name, schema_name: args.schema_name, table_name: args.table_name },
  };
  const series: Array<MetricSeries & { entity?: Record<string, string | null> }> = args.group_by
    ? await runGroupedMetricsQuery(db, { ...query, groupBy: args.group_by, top: args.top })
    : (await runMetricsQuery(db, query)).series;
  const label = (s: (typeof series)[number]) => {
    const parts = [
      ...(connectionIds.length > 1 ? [`connection_id=${s.connection_id}`] : []),
      ...Object.entries(s.entity ?? {}).map(([k, v]) => `${k}=${v ?? ""}`),
    ];
    return parts.length ? `${s.name}{${parts.join(",")}}` : s.name;
  };
  const times = series[0]?.data.map((p) => p.time) ?? [];
  const rows = times.map((time, k) => [time, ...series.map((s) => s.data[k].value)]);
  return toTsv(["bucket_time", ...series.map(label)], rows);
}
