import { z } from "zod";
import { performanceSummary } from "../../queries/performance-summary.ts";
import { toolWindow } from "../../metrics/window.ts";
import { defineTool, ToolError } from "../tool.ts";
import { connectionArgs, namedConnections, timeArgs } from "../vocabulary.ts";
import { toTsv } from "../tsv.ts";
import { FROM_A_SERVER } from "../fence.ts";

const COLUMNS = ["connection_id", "time", "cache_hit_ratio", "commits_per_sec", "rollback_percent", "checkpoint_write_ms", "checkpoint_sync_ms"] as const;

function requireConnections(args: { connection_id?: number; connection_ids?: number[] }): number[] {
  const ids = namedConnections(args);
  if (!ids) throw new ToolError("give connection_id (one server) or connection_ids (several)");
  return ids;
}

export const getPerformanceSummary = defineTool({
  name: "get_performance_summary",
  title: "Get a performance summary",
  description:
    "For each connection: one line with its transaction id ages (wraparound risk) and current figures, then a TSV table (" +
    COLUMNS.join(", ") +
    ") with one row per bucket of one sixtieth of the window (at least 10 s). The cache hit ratio is that bucket's own (hits / block requests of " +
    "the changes in it); rates and checkpoint times come from reset- and gap-aware changes. Empty cells: nothing measured in that bucket.",
  inputSchema: z.object({
    ...connectionArgs,
    ...timeArgs("default 1h"),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access, now }) {
    const summary = await performanceSummary(db, {
      access,
      connectionIds: requireConnections(args),
      window: toolWindow(args.time_start, args.time_end, now),
      timeRange: "custom",
    });
    const lines = summary.connections.map((c) => {
      const ages = c.xid_age.map((x) => `${x.database_name} ${x.age} (${x.percent}%)`).join(", ") || "unknown";
      return (
        `connection ${c.connection_id} (${c.connection_name}): xid age ${ages}; now: cache hit ratio ${c.cache_hit_ratio.current ?? "-"}%, ` +
        `${c.transactions.commits_per_sec ?? "-"} commits/s, ${c.transactions.rollback_percent ?? "-"}% rollbacks`
      );
    });
    const rows = summary.connections.flatMap((c) => {
      const times = [...new Set([...c.cache_hit_ratio.time_series, ...c.transactions.time_series, ...c.checkpoints.time_series].map((p) => p.time))].sort();
      return times.map((time) => {
        const tx = c.transactions.time_series.find((p) => p.time === time);
        const cp = c.checkpoints.time_series.find((p) => p.time === time);
        return [
          c.connection_id,
          time,
          c.cache_hit_ratio.time_series.find((p) => p.time === time)?.value,
          tx?.commits_per_sec,
          tx?.rollback_percent,
          cp?.write_time_ms,
          cp?.sync_time_ms,
        ];
      });
    });
    const header = `window ${summary.time_start} to ${summary.time_end}, buckets of ${summary.bucket_seconds} s`;
    return [header, ...lines, "", toTsv(COLUMNS, rows)].join("\n");
  },
});
