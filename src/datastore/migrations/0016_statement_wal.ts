import { probeTable, quoteIdent } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

// Fresh installs already have these columns (migrations 2 and 3 create the catalogue as it stands), hence IF NOT EXISTS.
const table = probeTable("pg_stat_statements");
const changes = probeTable("pg_stat_statements__changes");
const COLUMNS: Array<[string, string]> = [
  ["wal_records", "bigint"],
  ["wal_fpi", "bigint"],
  ["wal_bytes", "numeric"],
];

/** pg_stat_statements keeps each statement's WAL figures (query-stats totals them). */
export const migration: Migration = {
  version: 16,
  name: "statement_wal",
  statements: [
    ...COLUMNS.map(([name, type]) => `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} ${type}`),
    ...COLUMNS.map(([name]) => `ALTER TABLE ${changes} ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} double precision`),
  ],
};
