import { z } from "zod";
import { AGGREGATIONS } from "../../metrics/aggregate.ts";
import { MAX_BUCKETS } from "../../metrics/buckets.ts";
import { parseMetricName } from "../../metrics/metric-names.ts";
import { MAX_TOP, runGroupedMetricsQuery } from "../../queries/grouped-query.ts";
import { requireProbe } from "../../metrics/metrics-plan.ts";
import { type MetricSeries, runMetricsQuery } from "../../queries/query.ts";
import { toolWindow } from "../../metrics/window.ts";
import { defineTool, ToolError } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_A_SERVER } from "../fence.ts";

const input = z.object({
  probe_name: z.string().min(1).describe("Probe name from list_probes, e.g. pg_stat_database"),
  connection_id: z.number().int().positive().max(2_147_483_647).describe("Id of the monitored connection"),
  time_start: z.string().optional().describe("Window start: relative to time_end (30m, 1h, 24h, 7d) or ISO 8601; default 1h"),
  time_end: z.string().optional().describe("Window end: ISO 8601 or now (default); a future end is clamped to now"),
  buckets: z.number().int().optional().describe(`Number of time buckets, 1 to ${MAX_BUCKETS}; default 150; never narrower than the collection interval`),
  metrics: z.string().optional().describe("Comma-separated column names (describe_probe lists them); default all numeric columns"),
  database_name: z.string().optional().describe("Only rows of this database (database-scoped probes and pg_database)"),
  schema_name: z.string().optional().describe("Only rows of this schema (table and index probes)"),
  table_name: z.string().optional().describe("Only rows of this table (table and index probes)"),
  group_by: z.string().optional().describe("Comma-separated key columns (e.g. database_name): one column per metric per entity instead of their sum"),
  top: z.number().int().min(1).max(MAX_TOP).optional().describe("With group_by: only the entities with the largest total of the first metric"),
  aggregation: z
    .enum(AGGREGATIONS)
    .optional()
    .describe(
      "How the values in a bucket are combined: avg (default; rates, averages), sum (cumulative counts), max (peaks), min (minimum thresholds), last (point-in-time values)",
    ),
});

export const queryMetrics = defineTool({
  name: "query_metrics",
  title: "Query collected metrics",
  description:
    "Returns a probe's stored columns over time for one connection as TSV: bucket_time (start of each bucket; the " +
    "last row marks the window end) plus one column per metric with the aggregated value, empty where no value. " +
    "Only the probe's own columns: derived rates (_per_sec, _delta, _pct, _sessions, dead_tuple_ratio) are served by " +
    "GET /api/v1/metrics/query. For pg_sys_network_info the loopback interfaces lo and lo0 are left out.",
  inputSchema: input,
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, now, access }) {
    if (args.buckets !== undefined && (args.buckets < 1 || args.buckets > MAX_BUCKETS))
      throw new ToolError(`\`buckets\` must be between 1 and ${MAX_BUCKETS}; got ${args.buckets}`);
    const probe = requireProbe(args.probe_name);
    for (const name of (args.metrics ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (parseMetricName(name, probe).form !== "raw")
        throw new ToolError(`query_metrics returns the probe's own columns only; \`${name}\` is a derived metric: request it from GET /api/v1/metrics/query`);
    }
    if (args.top !== undefined && !args.group_by) throw new ToolError("`top` ranks entity groups: give `group_by` too");
    const query = {
      access,
      probeName: args.probe_name,
      connectionIds: [args.connection_id],
      window: toolWindow(args.time_start, args.time_end, now),
      buckets: args.buckets,
      aggregation: args.aggregation,
      metrics: args.metrics,
      filters: { database_name: args.database_name, schema_name: args.schema_name, table_name: args.table_name },
    };
    const series: Array<MetricSeries & { entity?: Record<string, string | null> }> = args.group_by
      ? await runGroupedMetricsQuery(db, { ...query, groupBy: args.group_by, top: args.top })
      : (await runMetricsQuery(db, query)).series;
    // A grouped column is named after its metric and entity: xact_commit{database_name=shop}.
    const label = (s: (typeof series)[number]) =>
      s.entity
        ? `${s.name}{${Object.entries(s.entity)
            .map(([k, v]) => `${k}=${v ?? ""}`)
            .join(",")}}`
        : s.name;
    const times = series[0]?.data.map((p) => p.time) ?? [];
    const rows = times.map((time, k) => [time, ...series.map((s) => s.data[k].value)]);
    return toTsv(["bucket_time", ...series.map(label)], rows);
  },
});
