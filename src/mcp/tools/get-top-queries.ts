import { z } from "zod";
import { TOP_QUERY_ORDERS, parseQueryid, topQueries } from "../../queries/top-queries.ts";
import { toolWindow } from "../../metrics/window.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_A_SERVER } from "../fence.ts";

const COLUMNS = ["queryid", "database_name", "calls", "total_exec_time", "mean_exec_time", "rows", "shared_blks_hit", "shared_blks_read", "query"] as const;

export const getTopQueries = defineTool({
  name: "get_top_queries",
  title: "Get the top queries",
  description:
    "The costliest statements of one connection from pg_stat_statements samples, as TSV (" +
    COLUMNS.join(", ") +
    "; times in ms). " +
    "Without time_start: lifetime totals of the latest sample. With time_start (relative like 1h or ISO 8601): each statement's change " +
    "over the window, aware of pg_stat_statements_reset() — what was expensive in that period. pglens's own probe statements are left out unless exclude_collector is false.",
  inputSchema: z.object({
    connection_id: z.number().int().positive().max(2_147_483_647).describe("Id of the monitored connection"),
    order_by: z.enum(TOP_QUERY_ORDERS).optional().describe("Default total_exec_time"),
    order: z.enum(["asc", "desc"]).optional().describe("Default desc"),
    limit: z.number().int().min(1).max(100).optional().describe("Default 10"),
    queryid: z.string().optional().describe("Only this statement"),
    exclude_collector: z.boolean().optional().describe("Leave out pglens's own probe statements (default true)"),
    time_start: z.string().optional().describe("Window start: relative to time_end (30m, 1h, 24h, 7d) or ISO 8601; omit for lifetime totals"),
    time_end: z.string().optional().describe("Window end: ISO 8601 or now (default); only with time_start"),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, access, now }) {
    const rows = await topQueries(db, {
      access,
      connectionId: args.connection_id,
      limit: args.limit ?? 10,
      orderBy: args.order_by ?? "total_exec_time",
      order: args.order ?? "desc",
      queryid: parseQueryid(args.queryid),
      excludeCollector: args.exclude_collector ?? true,
      window: args.time_start === undefined ? undefined : toolWindow(args.time_start, args.time_end, now),
    });
    return toTsv(
      COLUMNS,
      rows.map((r) => COLUMNS.map((c) => r[c])),
    );
  },
});
