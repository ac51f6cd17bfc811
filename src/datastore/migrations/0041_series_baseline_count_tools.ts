import { registerTools } from "./tool-privileges.ts";
import type { Migration } from "./types.ts";

/** The get_metric_series, get_metric_baselines and count_rows MCP tools join the privilege registry. */
export const migration: Migration = {
  version: 41,
  name: "series_baseline_count_tools",
  statements: registerTools(["get_metric_series", "get_metric_baselines", "count_rows"]),
};
