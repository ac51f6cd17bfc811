import { MCP_PRIVILEGES } from "../../vocabulary/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";

/** Statements that add these tools to the MCP privilege registry (idempotent). */
export const registerTools = (names: readonly string[]): string[] =>
  MCP_PRIVILEGES.filter((p) => names.includes(p.identifier)).map(
    (p) =>
      `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
  );
