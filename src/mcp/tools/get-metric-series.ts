import { z } from "zod";
import { TIME_RANGES, resolveWindow, toolWindow } from "../../metrics/window.ts";
import { FROM_A_SERVER } from "../fence.ts";
import { ToolError, defineTool } from "../tool.ts";
import { timeArgs } from "../vocabulary.ts";
import { seriesArgs, seriesTsv } from "./metric-series.ts";

/** The REST metrics query (GET /api/v1/metrics/query) for assistants: raw and derived metrics, as TSV. */
export const getMetricSeries = defineTool({
  name: "get_metric_series",
  title: "Get metric series, rates included",
  description:
    "The metrics query: raw columns and derived metrics of a probe over time, computed per entity between consecutive samples, aware of " +
    "statistics resets and collection gaps. Derived names: <counter>_per_sec, <counter or time column>_delta, <time column>_pct, " +
    "<session time column>_sessions, dead_tuple_ratio (describe_probe tells which columns are which). TSV: bucket_time (start of each " +
    "bucket; the last row marks the window end) plus one column per metric (per connection when several, per entity with group_by), " +
    "empty where no value. The window: time_range (a preset) or time_start/time_end.",
  inputSchema: z.object({
    ...seriesArgs,
    metrics: z
      .string()
      .max(2000)
      .optional()
      .describe("Comma-separated raw columns and derived names, e.g. xact_commit_per_sec,blk_read_time_pct,numbackends; default all raw numeric columns"),
    time_range: z
      .enum(TIME_RANGES)
      .optional()
      .describe("A rolling window ending now (default 1h), or custom with time_start/time_end; time_start alone means custom"),
    ...timeArgs("default 1h"),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, now, access }) {
    const custom = args.time_start !== undefined || args.time_end !== undefined;
    if (args.time_range === "custom" && args.time_start === undefined) throw new ToolError("time_range custom needs time_start (and optionally time_end)");
    if (custom && args.time_range !== undefined && args.time_range !== "custom")
      throw new ToolError(`give either time_range ${args.time_range} or time_start/time_end, not both`);
    const window = custom ? toolWindow(args.time_start, args.time_end, now) : resolveWindow({ time_range: args.time_range }, now);
    return seriesTsv(db, access, args, window);
  },
});
