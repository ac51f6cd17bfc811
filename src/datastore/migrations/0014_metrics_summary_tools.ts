import { MCP_PRIVILEGES } from "../../auth/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

const TOOLS = ["get_performance_summary", "get_top_queries", "get_latest_snapshot"];

/** The metrics summary tools join the privilege registry. */
export const migration: Migration = {
  version: 14,
  name: "metrics_summary_tools",
  statements: MCP_PRIVILEGES.filter((p) => TOOLS.includes(p.identifier)).map(
    (p) => `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
  ),
};
