import { z } from "zod";
import { parseMetricName } from "../../metrics/metric-names.ts";
import { requireProbe } from "../../metrics/metrics-plan.ts";
import { toolWindow } from "../../metrics/window.ts";
import { FROM_A_SERVER } from "../fence.ts";
import { ToolError, defineTool } from "../tool.ts";
import { timeArgs } from "../vocabulary.ts";
import { seriesArgs, seriesTsv } from "./metric-series.ts";

export const queryMetrics = defineTool({
  name: "query_metrics",
  title: "Query collected metrics",
  description:
    "Returns a probe's stored columns over time as TSV: bucket_time (start of each bucket; the last row marks the window end) plus one " +
    "column per metric (per connection when several) with the aggregated value, empty where no value. Only the probe's own columns: " +
    "derived rates (_per_sec, _delta, _pct, _sessions, dead_tuple_ratio) come from get_metric_series. For pg_sys_network_info the " +
    "loopback interfaces lo and lo0 are left out.",
  inputSchema: z.object({
    ...seriesArgs,
    ...timeArgs("default 1h"),
    metrics: z.string().max(2000).optional().describe("Comma-separated column names (describe_probe lists them); default all numeric columns"),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, now, access }) {
    const probe = requireProbe(args.probe_name);
    for (const name of (args.metrics ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (parseMetricName(name, probe).form !== "raw")
        throw new ToolError(`query_metrics returns the probe's own columns only; \`${name}\` is a derived metric: ask get_metric_series for it`);
    }
    return seriesTsv(db, access, args, toolWindow(args.time_start, args.time_end, now));
  },
});
