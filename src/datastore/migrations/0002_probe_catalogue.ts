import { catalogueStatements } from "../../probes/ddl.ts";
import { PROBES } from "../../probes/index.ts";
import type { Migration } from "./types.ts";

/**
 * The `metrics.<probe>` tables and the global probe_configs rows, generated from the probe catalogue.
 * A later change to a probe's columns needs its own migration written with IF [NOT] EXISTS, because a
 * fresh datastore gets this migration with the catalogue as it is then.
 */
export const migration: Migration = {
  version: 2,
  name: "probe_catalogue",
  // pg_extension joined the catalogue in migration 5.
  statements: catalogueStatements(PROBES.filter((p) => p.name !== "pg_extension")),
};
