import { isToolEnabled, type Config } from "../../config.ts";
import type { ToolDefinition } from "../tool.ts";
import { countRows } from "./count-rows.ts";
import { describeProbe } from "./describe-probe.ts";
import { executeExplain } from "./execute-explain.ts";
import { getAlertRules } from "./get-alert-rules.ts";
import { getOverviewTool } from "./get-overview.ts";
import { getLatestSnapshot } from "./get-latest-snapshot.ts";
import { getMetricBaselines } from "./get-metric-baselines.ts";
import { getMetricSeries } from "./get-metric-series.ts";
import { getPerformanceSummary } from "./get-performance-summary.ts";
import { getTopQueries } from "./get-top-queries.ts";
import { getSchemaInfo } from "./get-schema-info.ts";
import { getTimeline } from "./get-timeline.ts";
import { listAlertsTool } from "./list-alerts.ts";
import { listConnectionsTool } from "./list-connections.ts";
import { listBlackoutsTool } from "./list-blackouts.ts";
import { listProbes } from "./list-probes.ts";
import { queryDatabase } from "./query-database.ts";
import { queryMetrics } from "./query-metrics.ts";
import { recallMemoriesTool } from "./recall-memories.ts";
import { storeMemoryTool } from "./store-memory.ts";

/** Every tool pglens offers, in the order they are listed. */
export const TOOLS: readonly ToolDefinition[] = [
  listConnectionsTool,
  listProbes,
  describeProbe,
  queryMetrics,
  getMetricSeries,
  getPerformanceSummary,
  getTopQueries,
  getLatestSnapshot,
  queryDatabase,
  countRows,
  getSchemaInfo,
  executeExplain,
  listAlertsTool,
  getAlertRules,
  getMetricBaselines,
  listBlackoutsTool,
  getTimeline,
  storeMemoryTool,
  recallMemoriesTool,
  getOverviewTool,
] as unknown as ToolDefinition[];

/** The tools this configuration leaves switched on. */
export function enabledTools(config: Config): ToolDefinition[] {
  return TOOLS.filter((t) => isToolEnabled(config, t.name));
}
