import { MCP_PRIVILEGES } from "../../auth/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

/** The list_connections MCP tool joins the privilege registry. */
export const migration: Migration = {
  version: 13,
  name: "list_connections_tool",
  statements: MCP_PRIVILEGES.filter((p) => p.identifier === "list_connections").map(
    (p) => `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
  ),
};
