import { registerTools } from "./tool-privileges.ts";
import type { Migration } from "./types.ts";

/** The list_connections MCP tool joins the privilege registry. */
export const migration: Migration = {
  version: 13,
  name: "list_connections_tool",
  statements: registerTools(["list_connections"]),
};
