import { catalogueStatements } from "../../probes/ddl.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * The `metrics.<probe>` tables and the global probe_configs rows, generated from the probe catalogue.
 * A later change to a probe's columns needs its own migration written with IF [NOT] EXISTS, because a
 * fresh datastore gets this migration with the catalogue as it is then.
 */
/** pg_extension joined in migration 5; pg_postmaster, pg_hba_file_rules and pg_ident_file_mappings in 11. */
const JOINED_LATER = ["pg_extension", "pg_postmaster", "pg_hba_file_rules", "pg_ident_file_mappings", "pg_node_role", "pg_subscription_upstream"];

export const migration: Migration = {
  version: 2,
  name: "probe_catalogue",
  // Probes that joined the catalogue later are created by their own migrations.
  statements: catalogueStatements(probesAt(2).filter((p) => !JOINED_LATER.includes(p.name))),
  forProbes: catalogueStatements,
};
