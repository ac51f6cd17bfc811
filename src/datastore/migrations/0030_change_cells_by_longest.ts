import { changeCellsTableName, createChangeCellsTable, probeTable } from "../../probes/ddl.ts";
import { PROBES } from "../../probes/index.ts";
import type { Migration } from "./types.ts";

/**
 * A counter query finds the few cells holding an interval longer than it can read from cells (a collector stopped
 * for a while) by index, in the statement that reads the rest (metrics/rollup-changes.ts), instead of scanning
 * every cell of the window a second time. Cells are 13 rows an hour per connection: the index is small.
 */
export const migration: Migration = {
  version: 30,
  name: "change_cells_by_longest",
  statements: PROBES.filter((p) => createChangeCellsTable(p).length > 0).map(
    (p) => `CREATE INDEX IF NOT EXISTS ${p.name}__change_cells_by_longest ON ${probeTable(changeCellsTableName(p.name))} (connection_id, max_span_ms)`,
  ),
};
