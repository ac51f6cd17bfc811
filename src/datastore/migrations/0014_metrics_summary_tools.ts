import { registerTools } from "./tool-privileges.ts";
import type { Migration } from "./types.ts";

const TOOLS = ["get_performance_summary", "get_top_queries", "get_latest_snapshot"];

/** The metrics summary tools join the privilege registry. */
export const migration: Migration = {
  version: 14,
  name: "metrics_summary_tools",
  statements: registerTools(TOOLS),
};
