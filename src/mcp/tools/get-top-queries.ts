import { z } from "zod";
import { TOP_QUERY_ORDERS, parseQueryid, topQueries } from "../../queries/top-queries.ts";
import { toolWindow } from "../../metrics/window.ts";
import { defineTool } from "../tool.ts";
import { oneConnection, timeArgs } from "../vocabulary.ts";
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
    "Without time_start: lifetime totals of the latest sample. With time_start: each statement's change " +
    "over the window, aware of pg_stat_statements_reset() — what was expensive in that period. pglens's own probe statements are left out unless exclude_collector is false.",
  inputSchema: z.object({
    connection_id: oneConnection(),
    order_by: z.enum(TOP_QUERY_ORDERS).optional().describe("The column to rank by (default total_exec_time)"),
    order: z.enum(["asc", "desc"]).optional().describe("Ranking order (default desc)"),
    limit: z.number().int().min(1).max(100).optional().describe("Most statements to return, 1 to 100 (default 10)"),
    queryid: z.string().max(21).optional().describe("Only this statement (its pg_stat_statements queryid)"),
    exclude_collector: z.boolean().optional().describe("Leave out pglens's own probe statements (default true)"),
    ...timeArgs("absent: lifetime totals, not a window"),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access, now }) {
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
