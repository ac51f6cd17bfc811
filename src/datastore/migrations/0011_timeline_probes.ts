import { MCP_PRIVILEGES } from "../../vocabulary/permissions.ts";
import { catalogueStatements, quoteLiteral } from "../../probes/ddl.ts";
import { pgHbaFileRules } from "../../probes/pg_hba_file_rules.ts";
import { pgIdentFileMappings } from "../../probes/pg_ident_file_mappings.ts";
import { pgPostmaster } from "../../probes/pg_postmaster.ts";
import type { Migration } from "./types.ts";

/** Probes the timeline reads (server start times, pg_hba.conf rules, pg_ident.conf maps) and its MCP tool. */
export const migration: Migration = {
  version: 11,
  name: "timeline_probes",
  statements: [
    ...catalogueStatements([pgPostmaster, pgHbaFileRules, pgIdentFileMappings]),
    ...MCP_PRIVILEGES.filter((p) => p.identifier === "get_timeline").map(
      (p) =>
        `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, 'tool', ${quoteLiteral(p.description)}) ON CONFLICT DO NOTHING`,
    ),
  ],
};
